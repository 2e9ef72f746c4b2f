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

// The error loading `name`'s tokenizer.json after `edit` changed it ("" when none).
std::string load_error_after(const std::string& name, const std::function<void(json::object&)>& edit) {
  auto root = json::parse(slurp(tokenizer_data() + "/" + name + "/tokenizer.json"));
  edit(root.as_object());
  try {
    Tokenizer::from_json(json::serialize(root), "edited/tokenizer.json");
  } catch (const shardkit::FormatError& e) {
    return e.what();
  }
  return "";
}

json::object& model(json::object& o) { return o["model"].as_object(); }

}  // namespace

TEST_CASE("unsupported tokenizer.json features are refused by name", "[tokenizer][errors]") {
  auto e = load_error_after("gpt2", [](json::object& o) { model(o)["byte_fallback"] = true; });
  CHECK(contains(e, "edited/tokenizer.json"));
  CHECK(contains(e, "byte_fallback"));
  CHECK(contains(e, "not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["normalizer"] = json::object{{"type", "NFKC"}}; });
  CHECK(contains(e, "normalizer 'NFKC' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { model(o)["type"] = "WordPiece"; });
  CHECK(contains(e, "model type 'WordPiece' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["pre_tokenizer"] = json::object{{"type", "Metaspace"}}; });
  CHECK(contains(e, "pre_tokenizer type 'Metaspace' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { o["post_processor"] = json::object{{"type", "BertProcessing"}}; });
  CHECK(contains(e, "post_processor type 'BertProcessing' is not supported"));
  e = load_error_after("llama3", [](json::object& o) {
    o["pre_tokenizer"].as_object()["pretokenizers"].as_array()[0].as_object()["behavior"] = "MergedWithPrevious";
  });
  CHECK(contains(e, "Split pre-tokenizer behavior 'MergedWithPrevious' is not supported"));
  e = load_error_after("gpt2", [](json::object& o) { model(o)["merges"].as_array()[0] = json::array{"notatoken", "x"}; });
  CHECK(contains(e, "merge 0"));
  CHECK(contains(e, "notatoken"));
  e = load_error_after("llama3", [](json::object& o) {
    o["pre_tokenizer"].as_object()["pretokenizers"].as_array()[0].as_object()["pattern"] = json::object{{"Regex", "(unclosed"}};
  });
  CHECK(contains(e, "does not compile"));
  try {
    Tokenizer::from_json("{\"model\": [", "broken.json");
    FAIL("no error");
  } catch (const shardkit::FormatError& err) {
    CHECK(contains(err.what(), "broken.json: not valid JSON"));
  }
}

TEST_CASE("missing files and invalid UTF-8 input are errors naming what is wrong", "[tokenizer][errors]") {
  TempDir dir;
  try {
    Tokenizer::load(dir.path());
    FAIL("no error");
  } catch (const shardkit::FormatError& e) {
    CHECK(contains(e.what(), "holds no tokenizer.json"));
  }
  CHECK_THROWS_AS(Tokenizer::load(dir / "nope.json"), shardkit::FormatError);
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
