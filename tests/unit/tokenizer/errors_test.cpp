// Tokenizer features this implementation lacks, and broken files, are clear errors.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <functional>

#include "shardkit/error.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer_test_util.hpp"

using namespace shardkit::test;
using shardkit::text::Tokenizer;

namespace json = boost::json;

namespace {

// The error loading `name`'s tokenizer.json after `edit` changed it ("" when none): a
// ConfigError for what is not supported, a FormatError for a malformed file.
std::string load_error_after(const std::string& name, const std::function<void(json::object&)>& edit) {
  auto root = json::parse(slurp(tokenizer_data() + "/" + name + "/tokenizer.json"));
  edit(root.as_object());
  try {
    Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json");
  } catch (const shardkit::ConfigError& e) {
    return e.what();
  } catch (const shardkit::FormatError& e) {
    return e.what();
  }
  return "";
}

json::object& model(json::object& o) { return o["model"].as_object(); }

}  // namespace

TEST_CASE("unsupported tokenizer.json features are refused by name", "[tokenizer][errors]") {
  auto e = load_error_after("gpt2", [](json::object& o) { model(o)["dropout"] = 0.1; });
  CHECK(contains(e, "edited/tokenizer.json"));
  CHECK(contains(e, "dropout"));
  CHECK(contains(e, "not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["normalizer"] = json::object{{"type", "Precompiled"}}; });
  CHECK(contains(e, "normalizer type 'Precompiled' is not supported"));
  CHECK(contains(e, "NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip, Sequence"));
  e = load_error_after("gpt2", [](json::object& o) { model(o)["type"] = "WordPiece"; });
  CHECK(contains(e, "model type 'WordPiece' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["pre_tokenizer"] = json::object{{"type", "Whitespace"}}; });
  CHECK(contains(e, "pre_tokenizer type 'Whitespace' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["post_processor"] = json::object{{"type", "BertProcessing"}}; });
  CHECK(contains(e, "post_processor type 'BertProcessing' is not supported"));
  e = load_error_after("llama3", [](json::object& o) {
    o["pre_tokenizer"].as_object()["pretokenizers"].as_array()[0].as_object()["behavior"] = "Sideways";
  });
  CHECK(contains(e, "Split pre-tokenizer behavior 'Sideways' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { model(o)["merges"].as_array()[0] = json::array{"notatoken", "x"}; });
  CHECK(contains(e, "merge 0"));
  CHECK(contains(e, "notatoken"));
  e = load_error_after("llama3", [](json::object& o) {
    o["pre_tokenizer"].as_object()["pretokenizers"].as_array()[0].as_object()["pattern"] = json::object{{"Regex", "(unclosed"}};
  });
  CHECK(contains(e, "does not compile"));
  e = load_error_after("mistral", [](json::object& o) { o["pre_tokenizer"].as_object()["prepend_scheme"] = "sometimes"; });
  CHECK(contains(e, "prepend_scheme 'sometimes' is none of always, first, never"));
  e = load_error_after("llama2", [](json::object& o) {
    o["decoder"].as_object()["decoders"].as_array()[3].as_object()["content"] = "ab";
  });
  CHECK(contains(e, "Strip decoder's 'content' must be one character, not 'ab'"));
  try {
    Tokenizer::from_json("{\"model\": [", "broken.json");
    FAIL("no error");
  } catch (const shardkit::FormatError& err) {
    CHECK(contains(err.what(), "broken.json: not valid JSON"));
  }
}

TEST_CASE("a decoder that is not supported fails decoding only, naming it", "[tokenizer][errors]") {
  auto root = json::parse(slurp(tokenizer_data() + "/gpt2/tokenizer.json"));
  root.as_object()["decoder"] = json::object{{"type", "WordPiece"}, {"prefix", "##"}};
  const auto tokenizer = Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json");
  const auto ids = tokenizer->encode("hello world", false);
  CHECK_FALSE(ids.empty());
  try {
    tokenizer->decode(ids);
    FAIL("no error");
  } catch (const shardkit::FormatError& e) {
    CHECK(contains(e.what(), "edited/tokenizer.json: decoder 'WordPiece' is not supported for decoding"));
  }
  // A null decoder joins the tokens with spaces, as tokenizers does.
  root.as_object()["decoder"] = nullptr;
  const auto plain = Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json");
  const auto two = plain->encode("ab cd", false);
  REQUIRE(two.size() >= 2);
  CHECK(plain->decode({two[0], two[1]}) == plain->decode({two[0]}) + " " + plain->decode({two[1]}));
  CHECK(contains(plain->decode(two), "\xC4\xA0"));  // the raw byte-level token of " cd": no decoding
}

TEST_CASE("what is not supported is a configuration error, a malformed file a format error", "[tokenizer][errors]") {
  // shardkit-train exits 2 for the first (name another tokenizer), 1 for the second (a damaged file).
  auto root = json::parse(slurp(tokenizer_data() + "/gpt2/tokenizer.json"));
  root.as_object()["normalizer"] = json::object{{"type", "Precompiled"}};
  CHECK_THROWS_AS(Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json"), shardkit::ConfigError);
  root = json::parse(slurp(tokenizer_data() + "/gpt2/tokenizer.json"));
  model(root.as_object())["merges"].as_array()[0] = json::array{"notatoken", "x"};
  CHECK_THROWS_AS(Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json"), shardkit::FormatError);
}

TEST_CASE("a tokenizer.json with several unsupported parts names them all in one error", "[tokenizer][errors]") {
  // Four parts at once: each is named, in the order of the file, in one message.
  auto e = load_error_after("gpt2", [](json::object& o) {
    o["normalizer"] = json::object{{"type", "Precompiled"}};
    model(o)["dropout"] = 0.1;
    o["pre_tokenizer"] = json::object{{"type", "Whitespace"}};
    o["post_processor"] = json::object{{"type", "BertProcessing"}};
  });
  INFO(e);
  CHECK(contains(e, "edited/tokenizer.json: 4 parts are not supported: (1) normalizer type 'Precompiled' is not supported"));
  CHECK(contains(e, "(2) model.dropout is set"));
  CHECK(contains(e, "(3) pre_tokenizer type 'Whitespace' is not supported"));
  CHECK(contains(e, "(4) post_processor type 'BertProcessing' is not supported"));

  // Llama 2's form (sentencepiece as BPE: Prepend + Replace, byte fallback) loads.
  e = load_error_after("gpt2", [](json::object& o) {
    o["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "_"}]})");
    model(o)["byte_fallback"] = true;
  });
  CHECK(e.empty());

  // Another model type, with a normalizer step and a pre-tokenizer step of Sequences that are not supported either.
  e = load_error_after("llama3", [](json::object& o) {
    o["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "StripAccents"}]})");
    model(o)["type"] = "Unigram";
    o["pre_tokenizer"].as_object()["pretokenizers"].as_array().push_back(json::object{{"type", "Digits"}});
  });
  INFO(e);
  CHECK(contains(e, "3 parts are not supported"));
  CHECK(contains(e, "(1) normalizer type 'StripAccents' is not supported"));
  CHECK(contains(e, "model type 'Unigram' is not supported"));
  CHECK(contains(e, "pre_tokenizer type 'Digits' is not supported"));

  // One part alone keeps the one-part form.
  e = load_error_after("gpt2", [](json::object& o) { o["pre_tokenizer"] = json::object{{"type", "Whitespace"}}; });
  CHECK(contains(e, "edited/tokenizer.json: pre_tokenizer type 'Whitespace' is not supported"));
}

TEST_CASE("missing files and invalid UTF-8 input are errors naming what is wrong", "[tokenizer][errors]") {
  TempDir dir;
  try {
    Tokenizer::load(dir.path());
    FAIL("no error");
  } catch (const shardkit::ConfigError& e) {  // a tokenizer not where the command says: exit 2
    CHECK(contains(e.what(), "holds no tokenizer.json"));
  }
  CHECK_THROWS_AS(Tokenizer::load(dir / "nope.json"), shardkit::ConfigError);
  const auto gpt2 = Tokenizer::load(tokenizer_data() + "/gpt2");
  try {
    gpt2->encode(std::string("ok \xC3\x28"), false);
    FAIL("no error");
  } catch (const shardkit::FormatError& e) {
    CHECK(contains(e.what(), "not valid UTF-8 (byte 3)"));
  }
}

TEST_CASE("tokenizer_config.json beside tokenizer.json names bos, eos and pad", "[tokenizer]") {
  TempDir dir;
  std::filesystem::copy_file(tokenizer_data() + "/llama3/tokenizer.json", dir / "tokenizer.json");
  const auto write = [&](const std::string& text) { std::ofstream(dir / "tokenizer_config.json") << text; };
  write(R"({"bos_token": "<|begin_of_text|>", "eos_token": {"content": "<|reserved_special_token_0|>"},
            "pad_token": "<|end_of_text|>", "chat_template": "{{ ignored }}"})");
  const auto t = Tokenizer::load(dir.path());
  CHECK(t->bos_id() == t->token_to_id("<|begin_of_text|>"));
  CHECK(t->eos_id() == t->token_to_id("<|reserved_special_token_0|>"));
  CHECK(t->pad_id() == t->token_to_id("<|end_of_text|>"));
  write(R"({"eos_token": "<|eot_id|>"})");
  try {
    Tokenizer::load(dir.path());
    FAIL("no error");
  } catch (const shardkit::FormatError& e) {
    CHECK(contains(e.what(), "tokenizer_config.json: eos_token '<|eot_id|>' is not a token of"));
  }
}

TEST_CASE("token ids far beyond the tokens a file defines are refused before anything is sized by them",
          "[tokenizer][errors][limits]") {
  const auto error = [](const std::string& text) {
    try {
      Tokenizer::from_json(text, "tiny/tokenizer.json");
    } catch (const shardkit::FormatError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // A 50-byte file asking for a 2^31-row table.
  CHECK_THAT(error(R"({"model":{"vocab":{"a":2147483647},"merges":[]}})"),
             Catch::Contains("tiny/tokenizer.json: model.vocab has id 2147483647 but the file defines only 1 tokens"));
  CHECK_THAT(error(R"({"model":{"vocab":{"a":0},"merges":[]},"added_tokens":[{"id":100000000,"content":"x"}]})"),
             Catch::Contains("added_tokens has id 100000000 but the file defines only 2 tokens"));
  CHECK_THAT(error(R"({"model":{"vocab":{"a":0},"merges":[]},"added_tokens":[{"id":-1,"content":"x"}]})"),
             Catch::Contains("an added_tokens entry has no non-negative integer 'id'"));
  // Real gaps (added tokens after a padded vocabulary) stay fine.
  CHECK(error(R"({"model":{"vocab":{"a":0,"b":1},"merges":[]},"added_tokens":[{"id":1000,"content":"<s>"}]})").empty());
}
