// encode_with_offsets: each id's byte range of the text, also where the pre-tokenizer or a
// normalizer adds a prefix the text does not hold, or a normalizer rewrites the text (what
// assistant-only labels are placed by).
#include <catch2/catch.hpp>

#include <algorithm>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer_test_util.hpp"

using namespace shardkit::test;
using shardkit::text::Tokenizer;

TEST_CASE("encode_with_offsets: each id covers the text it decodes to, prefix space or not", "[tokenizer]") {
  const auto& data = tokenizer_data();
  const auto corpus = read_records(data + "/corpus.bin");
  // (Not nfkc_lower: its decoded tokens are lowercase, the text is not.)
  for (const auto* name : {"gpt2", "gpt2_prefix", "llama3", "qwen2", "llama2", "mistral", "gemma", "nfd_metaspace",
                           "splits", "unk"}) {
    const auto tokenizer = Tokenizer::load(data + "/" + name);
    std::size_t checked = 0, bad = 0;
    for (const auto& text : corpus) {
      // ASCII lines: decoding one id then gives its own bytes, never a piece of a character.
      if (text.empty() || std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
        continue;
      std::vector<std::uint32_t> ids;
      std::vector<std::size_t> ends;
      tokenizer->encode_with_offsets(text, ids, ends);
      REQUIRE(ids == tokenizer->encode(text, false));
      REQUIRE(ends.size() == ids.size());
      if (ids.empty()) continue;  // white space only, removed by the unk tokenizer's Split
      // (The unk tokenizer's Split removes white space: trailing white space is then no token's.)
      if (std::string(name) == "unk") REQUIRE(ends.back() <= text.size());
      else REQUIRE(ends.back() == text.size());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::size_t begin = i == 0 ? 0 : ends[i - 1];
        const auto piece = text.substr(begin, ends[i] - begin);
        const auto decoded = tokenizer->decode({ids[i]});
        // The pre-tokenizer's own space (add_prefix_space) is in the token, not in the text; an
        // added token with lstrip/rstrip covers the whitespace it takes, as in tokenizers' offsets.
        const auto first = piece.find_first_not_of(" \t\r\n");
        const auto taken = first == std::string::npos ? std::string() : piece.substr(first, piece.find_last_not_of(" \t\r\n") + 1 - first);
        // A decoder that strips the first space of what it decodes (Llama 2's and Mistral's Strip,
        // Metaspace's) gives a word's token without it.
        const bool stripped = !piece.empty() && piece[0] == ' ' && piece.substr(1) == decoded;
        // An unknown run: its text is none of the vocabulary's.
        if (decoded == "<unk>" && !piece.empty() && !tokenizer->token_to_id(taken)) continue;
        if (piece != decoded && " " + piece != decoded && taken != decoded && !stripped && ++bad <= 3) {
          INFO(name << ": '" << text << "' id " << i << " covers '" << piece << "' but decodes to '" << decoded << "'");
          CHECK(piece == decoded);
        }
      }
      ++checked;
    }
    INFO(name << ": " << checked << " ASCII lines");
    CHECK(bad == 0);
    CHECK(checked > 1000);
  }
}
