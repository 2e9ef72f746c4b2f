// The text dataset's samples equal what Python `tokenizers` computes, for .jsonl, .csv and .txt, packed or padded.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include "text_test_util.hpp"

using namespace shardkit::test;

namespace {

// Documents with what the readers must get right: quotes, commas and newlines inside CSV
// fields, Unicode, an embedded special token, blank lines.
const char* const kTexts[] = {
    "The quick brown fox jumps over the lazy dog.",
    "Привет, мир! 你好世界 — café naïve 👨‍👩‍👧‍👦",
    "line one\nline two\twith tab",
    "He said \"hi\", then left.",
    "numbers 1234567 and 3.14159<|end_of_text|>after",
    "  leading and trailing spaces  ",
    "short",
};

std::string json_string(const std::string& s) { return boost::json::serialize(boost::json::value(s)); }

std::string csv_field(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

struct Files {
  std::string jsonl, csv, txt;
};

Files write_data(const TempDir& dir) {
  std::string jsonl, csv = "id,body,text\r\n", txt;
  int i = 0;
  for (const auto* t : kTexts) {
    const std::string text(t);
    jsonl += "{\"id\": " + std::to_string(i) + ", \"body\": " + json_string(text) + "}\n";
    if (i == 2) jsonl += "\n";  // a blank line is skipped
    csv += std::to_string(i) + "," + csv_field(text) + ",x\r\n";
    if (text.find('\n') == std::string::npos) txt += text + "\n\n";
    ++i;
  }
  Files f{dir / "data.jsonl", dir / "data.csv", dir / "data.txt"};
  write_file(f.jsonl, jsonl);
  write_file(f.csv, csv);
  write_file(f.txt, txt);
  return f;
}

void require_equal(const shardkit::Batch& got, const Expected& want) {
  for (const auto* key : {"input_ids", "attention_mask", "labels"}) {
    INFO(key << "\n ours:   " << got.at(key) << "\n python: " << (key == std::string("input_ids") ? want.input_ids : key == std::string("labels") ? want.labels : want.attention_mask));
    REQUIRE(got.at(key).scalar_type() == at::kLong);
  }
  CHECK(at::equal(got.at("input_ids"), want.input_ids));
  CHECK(at::equal(got.at("attention_mask"), want.attention_mask));
  CHECK(at::equal(got.at("labels"), want.labels));
}

}  // namespace

TEST_CASE("jsonl, csv and txt samples equal Python's, packed and padded", "[text][samples]") {
  TempDir dir;
  const auto files = write_data(dir);
  for (const auto* tok : {"llama3", "gpt2"}) {
    const auto tokenizer = text_tokenizers() + "/" + tok;
    for (const bool packing : {true, false}) {
      for (const auto& [file, column] : {std::pair{files.jsonl, "body"}, {files.csv, "body"}, {files.txt, "text"}}) {
        INFO(tok << " " << file << (packing ? " packed" : " padded"));
        const std::int64_t seq_len = packing ? 16 : 24;
        auto dataset = open_text({{"path", file}, {"text_column", std::string(column)}, {"tokenizer", tokenizer},
                                  {"max_seq_len", seq_len}, {"packing", packing}, {"cache_dir", dir / "cache"}});
        const auto want = python_samples(tokenizer, file, column, seq_len, packing, dir);
        REQUIRE(dataset->size() == want.input_ids.size(0));
        require_equal(all_samples(*dataset), want);
      }
    }
  }
}

TEST_CASE("packing fills every block but the last; padding masks and labels mark the pad", "[text][samples]") {
  TempDir dir;
  const auto files = write_data(dir);
  const auto tokenizer = text_tokenizers() + "/llama3";
  auto packed = open_text({{"path", files.jsonl}, {"text_column", std::string("body")}, {"tokenizer", tokenizer},
                           {"max_seq_len", std::int64_t{8}}, {"cache_dir", dir / "cache"}});
  auto padded = open_text({{"path", files.jsonl}, {"text_column", std::string("body")}, {"tokenizer", tokenizer},
                           {"max_seq_len", std::int64_t{64}}, {"packing", false}, {"cache_dir", dir / "cache"}});
  CHECK(packed->features() == shardkit::FeatureShapes{{"input_ids", {8}}, {"attention_mask", {8}}, {"labels", {8}}});
  CHECK(padded->features() == shardkit::FeatureShapes{{"input_ids", {64}}, {"attention_mask", {64}}, {"labels", {64}}});
  REQUIRE(padded->size() == 7);  // one sample per document
  const auto p = all_samples(*packed);
  const auto n = packed->size();
  // Every block except the last is full.
  CHECK(p.at("attention_mask").slice(0, 0, n - 1).sum().item<std::int64_t>() == (n - 1) * 8);
  const auto q = all_samples(*padded);
  const auto mask = q.at("attention_mask");
  CHECK(q.at("input_ids").sizes() == at::IntArrayRef({7, 64}));
  // Real tokens first, then padding; labels are -100 exactly where the mask is 0.
  for (std::int64_t r = 0; r < 7; ++r) {
    const auto len = mask[r].sum().item<std::int64_t>();
    CHECK(len > 2);
    CHECK(mask[r].slice(0, 0, len).min().item<std::int64_t>() == 1);
  }
  CHECK(at::equal(q.at("labels").eq(-100), mask.eq(0)));
  CHECK(at::equal(at::where(mask.eq(1), q.at("input_ids"), -100), q.at("labels")));
  // Each padded document starts with BOS and its real tokens end with EOS.
  const auto bos = q.at("input_ids").select(1, 0);
  CHECK(at::equal(bos, at::full({7}, bos[0].item<std::int64_t>(), at::kLong)));
  // The same token count either way: packing drops nothing.
  CHECK(p.at("attention_mask").sum().item<std::int64_t>() == mask.sum().item<std::int64_t>());
}

TEST_CASE("validation split: the last fraction of the documents, or another path", "[text][split]") {
  TempDir dir;
  const auto files = write_data(dir);
  const std::map<std::string, shardkit::Value> base{{"path", files.jsonl}, {"text_column", std::string("body")},
                                                   {"tokenizer", text_tokenizers() + "/gpt2"}, {"packing", false},
                                                   {"max_seq_len", std::int64_t{64}}, {"cache_dir", dir / "cache"}};
  auto with = [&](std::map<std::string, shardkit::Value> extra) {
    extra.insert(base.begin(), base.end());
    return open_text(extra);
  };
  const auto all = all_samples(*with({}));
  auto train = with({{"validation_fraction", 0.3}});
  auto valid = with({{"validation_fraction", 0.3}, {"split", std::string("validation")}});
  REQUIRE(train->size() == 5);
  REQUIRE(valid->size() == 2);
  CHECK(at::equal(all_samples(*train).at("input_ids"), all.at("input_ids").slice(0, 0, 5)));
  CHECK(at::equal(all_samples(*valid).at("input_ids"), all.at("input_ids").slice(0, 5, 7)));
  write_file(dir / "valid.txt", "held out\nanother one\nthird\n");
  auto other = with({{"validation_path", dir / "valid.txt"}, {"split", std::string("validation")}});
  CHECK(other->size() == 3);
  CHECK(contains(text_error({{"path", files.jsonl}, {"split", std::string("validation")},
                             {"tokenizer", text_tokenizers() + "/gpt2"}}),
                 "--dataset.split=validation needs --dataset.validation_fraction"));
}

TEST_CASE("the tokenizer defaults to --policy.path's folder", "[text][tokenizer]") {
  TempDir dir;
  const auto files = write_data(dir);
  shardkit::Config full;
  full.set("policy.path", text_tokenizers() + "/llama3");
  auto dataset = open_text({{"path", files.txt}, {"cache_dir", dir / "cache"}}, &full);
  CHECK(dataset->size() > 0);
  const auto e = text_error({{"path", files.txt}, {"cache_dir", dir / "cache"}});
  CHECK(contains(e, "--dataset.tokenizer"));
  CHECK(contains(e, "--policy.path"));
}
