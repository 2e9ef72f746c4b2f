// A data folder is split by its file names as Hugging Face datasets splits it (train*, validation*/dev*, test*).
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <filesystem>

#include "text_test_util.hpp"

using namespace shardkit::test;

namespace {

/// A .jsonl file of `n` one-word documents.
void jsonl(const std::string& path, int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += "{\"text\": \"doc " + std::to_string(i) + "\"}\n";
  write_file(path, text);
}

/// The text dataset on `folder`'s `split`, one document per sample (so size() counts documents).
std::int64_t documents(const TempDir& dir, const std::string& folder, const std::string& split) {
  return open_text({{"path", folder}, {"split", split}, {"packing", false}, {"tokenizer", text_tokenizers() + "/gpt2"},
                    {"cache_dir", dir / "cache"}})
      ->size();
}

}  // namespace

TEST_CASE("a folder holding train.jsonl and validation.jsonl trains on train.jsonl only", "[text][splits]") {
  TempDir dir("sk-text-splits");
  const auto data = dir / "data";
  std::filesystem::create_directory(data);
  jsonl(data + "/train.jsonl", 5);
  jsonl(data + "/validation.jsonl", 3);
  jsonl(data + "/test.jsonl", 2);
  CHECK(documents(dir, data, "train") == 5);       // before issue 26: all 10 documents
  CHECK(documents(dir, data, "validation") == 3);  // before issue 26: refused (no validation_fraction)
}

TEST_CASE("the split keywords and separators are those of Hugging Face datasets", "[text][splits]") {
  // Which split datasets 4.8 (data_files.py, fsspec >= 2023.12) puts each of these names in:
  // train: my-train_2, training, 2train; validation: dev, valid-00, val; test: test, evaluation;
  // none: trainer, Train (case), pretrain, devel, .train (hidden).
  TempDir dir("sk-text-keywords");
  const auto data = dir / "data";
  std::filesystem::create_directory(data);
  jsonl(data + "/my-train_2.jsonl", 1);
  write_file(data + "/training.csv", "text\nfirst\nsecond\n");
  jsonl(data + "/2train.jsonl", 4);
  write_file(data + "/dev.txt", "one\ntwo\nthree\n");
  jsonl(data + "/valid-00.jsonl", 10);
  jsonl(data + "/val.jsonl", 20);
  jsonl(data + "/test.jsonl", 100);
  jsonl(data + "/evaluation.jsonl", 100);
  for (const auto* unnamed : {"trainer.jsonl", "Train.jsonl", "pretrain.jsonl", "devel.jsonl", ".train.jsonl"})
    jsonl(data + "/" + unnamed, 1000);
  CHECK(documents(dir, data, "train") == 1 + 2 + 4);
  CHECK(documents(dir, data, "validation") == 3 + 10 + 20);
}

TEST_CASE("a folder whose names give no split is all training data, as before", "[text][splits]") {
  TempDir dir("sk-text-nosplit");
  const auto data = dir / "data";
  std::filesystem::create_directory(data);
  jsonl(data + "/a.jsonl", 2);
  jsonl(data + "/trainer.jsonl", 3);
  CHECK(documents(dir, data, "train") == 5);
  const auto e = text_error({{"path", data}, {"split", std::string("validation")},
                             {"tokenizer", text_tokenizers() + "/gpt2"}, {"cache_dir", dir / "cache"}});
  CHECK(contains(e, "--dataset.split=validation needs"));
  CHECK(contains(e, "validation files in the --dataset.path folder"));
}

TEST_CASE("split files and the validation options or a folder without train files are refused", "[text][splits]") {
  TempDir dir("sk-text-split-errors");
  const auto data = dir / "data";
  std::filesystem::create_directory(data);
  jsonl(data + "/train.jsonl", 5);
  jsonl(data + "/validation.jsonl", 3);
  const std::map<std::string, shardkit::Value> base{
      {"path", data}, {"tokenizer", text_tokenizers() + "/gpt2"}, {"cache_dir", dir / "cache"}};
  auto with_fraction = base;
  with_fraction["validation_fraction"] = 0.2;
  auto e = text_error(with_fraction);
  CHECK(contains(e, "--dataset.validation_fraction is set"));
  CHECK(contains(e, "validation.jsonl"));
  auto with_path = base;
  with_path["validation_path"] = data + "/validation.jsonl";
  CHECK(contains(text_error(with_path), "--dataset.validation_path is set"));

  std::filesystem::remove(data + "/train.jsonl");
  jsonl(data + "/test.jsonl", 2);
  e = text_error(base);
  CHECK(contains(e, "no file is in the train split"));
  CHECK(contains(e, "validation: validation.jsonl; test: test.jsonl"));
}
