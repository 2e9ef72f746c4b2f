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
  REQUIRE(corpus.size() >= 10000);
  REQUIRE(expected.size() == corpus.size());
  REQUIRE(decoded.size() == corpus.size());
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

TEST_CASE("decode(encode(text)) gives the text back", "[tokenizer]") {
  const auto& data = tokenizer_data();
  const auto corpus = read_records(data + "/corpus.bin");
  for (const auto* name : {"gpt2", "llama3"}) {
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
