// The C++ tokenizer gives Python `tokenizers`' ids and decoded text, token for token, on a varied corpus.
#include <catch2/catch.hpp>

#include <sstream>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer_test_util.hpp"

using namespace shardkit::test;
using shardkit::text::Tokenizer;

namespace {

std::string show(const std::vector<std::uint32_t>& ids) {
  std::ostringstream s;
  for (const auto id : ids) s << id << ' ';
  return s.str();
}

void require_same_as_python(const std::string& name) {
  const auto& data = tokenizer_data();
  const auto corpus = read_records(data + "/corpus.bin");
  const auto expected = read_ids(data + "/" + name + "/ids.txt");
  const auto decoded = read_records(data + "/" + name + "/decoded.bin");
  const auto decoded_half = read_records(data + "/" + name + "/decoded_half.bin");
  REQUIRE(corpus.size() >= 10000);
  REQUIRE(expected.size() == corpus.size());
  REQUIRE(decoded.size() == corpus.size());
  REQUIRE(decoded_half.size() == corpus.size());
  const auto tokenizer = Tokenizer::load(data + "/" + name);
  std::size_t id_mismatches = 0, text_mismatches = 0, tokens = 0;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const auto ids = tokenizer->encode(corpus[i], true);
    tokens += ids.size();
    if (ids != expected[i] && ++id_mismatches <= 5) {
      INFO(name << " line " << i << ": '" << corpus[i] << "'\n ours:   " << show(ids) << "\n python: " << show(expected[i]));
      CHECK(ids == expected[i]);
    }
    const auto text = tokenizer->decode(expected[i]);
    if (text != decoded[i] && ++text_mismatches <= 5) {
      INFO(name << " line " << i << " decoded");
      CHECK(text == decoded[i]);
    }
    // The first half of the ids, special tokens skipped: characters cut inside their fallback
    // bytes, a word start alone at the end.
    const std::vector<std::uint32_t> half(expected[i].begin(), expected[i].begin() + expected[i].size() / 2);
    const auto half_text = tokenizer->decode(half, true);
    if (half_text != decoded_half[i] && ++text_mismatches <= 5) {
      INFO(name << " line " << i << " first half decoded, special tokens skipped");
      CHECK(half_text == decoded_half[i]);
    }
  }
  INFO(name << ": " << corpus.size() << " lines, " << tokens << " tokens");
  CHECK(id_mismatches == 0);
  CHECK(text_mismatches == 0);
  CHECK(tokens > 100000);
}

}  // namespace

TEST_CASE("GPT-2 style tokenizer (ByteLevel pre-tokenizer with its regex) matches tokenizers", "[tokenizer]") {
  require_same_as_python("gpt2");
}

TEST_CASE("Llama-3 style tokenizer (Split regex, ignore_merges, template) matches tokenizers", "[tokenizer]") {
  require_same_as_python("llama3");
}

TEST_CASE("prefix space, \"a b\" merges, lstrip/rstrip and single_word added tokens match tokenizers",
          "[tokenizer]") {
  require_same_as_python("gpt2_prefix");
}

TEST_CASE("Qwen2 style tokenizer (NFC normalizer, Split regex, byte-level) matches tokenizers", "[tokenizer]") {
  require_same_as_python("qwen2");
}

TEST_CASE("Llama 2 style tokenizer (Prepend + Replace normalizers, byte fallback, its decoders) matches tokenizers",
          "[tokenizer]") {
  require_same_as_python("llama2");
}

TEST_CASE("Mistral style tokenizer (Metaspace prepend_scheme first, byte fallback) matches tokenizers", "[tokenizer]") {
  require_same_as_python("mistral");
}

TEST_CASE("Gemma style tokenizer (Replace normalizer, MergedWithPrevious split, byte fallback) matches tokenizers",
          "[tokenizer]") {
  require_same_as_python("gemma");
}

TEST_CASE("Strip, NFKC, Lowercase and regex Replace normalizers, normalized added tokens, match tokenizers",
          "[tokenizer]") {
  require_same_as_python("nfkc_lower");
}

TEST_CASE("NFD with a splitting Metaspace pre-tokenizer and the Metaspace decoder matches tokenizers", "[tokenizer]") {
  require_same_as_python("nfd_metaspace");
}

TEST_CASE("Split behaviours Contiguous, MergedWithNext and MergedWithPrevious match tokenizers", "[tokenizer]") {
  require_same_as_python("splits");
}

TEST_CASE("decode(encode(text)) gives the text back", "[tokenizer]") {
  const auto& data = tokenizer_data();
  const auto corpus = read_records(data + "/corpus.bin");
  // Byte-level and byte-fallback tokenizers without a normalizer that changes text or a prefix
  // their decoder strips lose nothing (Llama 2 and Mistral drop a leading space; Qwen2 composes).
  for (const auto* name : {"gpt2", "llama3", "gemma"}) {
    const auto tokenizer = Tokenizer::load(std::string(data) + "/" + name);
    std::size_t bad = 0;
    for (const auto& text : corpus)
      if (tokenizer->decode(tokenizer->encode(text, false)) != text && ++bad <= 3) {
        INFO(name << ": '" << text << "'");
        CHECK(false);
      }
    INFO(name);
    CHECK(bad == 0);
  }
}

TEST_CASE("special token ids: bos from the template, eos by name, skip_special_tokens", "[tokenizer]") {
  const auto& data = tokenizer_data();
  const auto llama = Tokenizer::load(data + "/llama3/tokenizer.json");
  REQUIRE(llama->bos_id() == llama->token_to_id("<|begin_of_text|>"));
  REQUIRE(llama->eos_id() == llama->token_to_id("<|end_of_text|>"));
  CHECK(llama->adds_bos());
  const auto ids = llama->encode("hi<|end_of_text|>", true);
  REQUIRE(ids.size() >= 3);
  CHECK(ids.front() == *llama->bos_id());
  CHECK(ids.back() == *llama->eos_id());
  CHECK(llama->decode(ids, true) == "hi");
  CHECK(llama->decode(ids, false) == "<|begin_of_text|>hi<|end_of_text|>");
  const auto gpt2 = Tokenizer::load(data + "/gpt2");
  CHECK_FALSE(gpt2->bos_id());
  CHECK_FALSE(gpt2->adds_bos());
  CHECK(gpt2->eos_id() == gpt2->token_to_id("<|endoftext|>"));
  CHECK(gpt2->vocab_size() == 2000);
}

TEST_CASE("unk_token with fuse_unk, raw-character vocabulary and a Removed split match tokenizers", "[tokenizer]") {
  require_same_as_python("unk");
  const auto tokenizer = Tokenizer::load(tokenizer_data() + "/unk");
  const auto unk = tokenizer->token_to_id("<unk>");
  REQUIRE(unk);
  // Characters outside the 60-character alphabet: one fused <unk> per run.
  const auto ids = tokenizer->encode("\u4F60\u597D\u4E16\u754C", false);
  CHECK(ids == std::vector<std::uint32_t>{*unk});
}
