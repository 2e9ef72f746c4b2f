// Bad input to the text dataset: each error names the file, line, column or flag involved.
#include "text_test_util.hpp"  // before Catch (it brings LibTorch): CHECK is Catch's

#include <catch2/catch.hpp>
#include <filesystem>

using namespace shardkit::test;

namespace {

std::map<std::string, shardkit::Value> with(const TempDir& dir, const std::string& path,
                                           const std::string& column = "text") {
  return {{"path", path}, {"text_column", column}, {"tokenizer", text_tokenizers() + "/gpt2"},
          {"cache_dir", dir / "cache"}};
}

}  // namespace

TEST_CASE("missing files and folders without data are named", "[text][errors]") {
  TempDir dir;
  CHECK(contains(text_error(with(dir, dir / "nope.jsonl")), "--dataset.path=" + dir / "nope.jsonl" + ": no such file"));
  CHECK(contains(text_error(with(dir, dir.path())), "holds no .jsonl, .csv, .parquet or .txt file"));
  write_file(dir / "data.xlsx", "x");
  CHECK(contains(text_error(with(dir, dir / "data.xlsx")), "not a .jsonl, .csv, .parquet or .txt file"));
  write_file(dir / "data.parquet", "x");  // damaged: named, never a crash
#if SHARDKIT_TEXT_PARQUET
  CHECK(contains(text_error(with(dir, dir / "data.parquet")), dir / "data.parquet" + ": "));
#else
  CHECK(contains(text_error(with(dir, dir / "data.parquet")), "reads no .parquet files"));
#endif
  CHECK(contains(text_error(with(dir, "")), "--dataset.path is not set"));
  auto bad_tok = with(dir, dir / "data.parquet");
  bad_tok["tokenizer"] = dir / "no-tokenizer";
  write_file(dir / "a.txt", "hello\n");
  bad_tok["path"] = dir / "a.txt";
  CHECK(contains(text_error(bad_tok), "no-tokenizer: no such tokenizer.json file"));
}

#if SHARDKIT_TEXT_PARQUET
TEST_CASE("a parquet file whose footer claims more rows than it holds is refused before reading",
          "[text][errors][limits]") {
  // Found by the text_documents fuzz target: 987 bytes whose row group claims 6,956,185,214
  // rows made Arrow reserve and clear gigabytes before it found the pages short.
  TempDir dir;
  const std::string found = std::string(SHARDKIT_SOURCE_DIR) +
                            "/tests/fuzz/text_documents_corpus/found_row_group_claims_7e9_rows";
  std::filesystem::copy_file(found, dir / "claims.parquet");
  const auto message = text_error(with(dir, dir / "claims.parquet"));
  CHECK(contains(message, dir / "claims.parquet" + ": row group 0 claims 6956185214 rows in a file of 987 bytes"));
  CHECK(contains(message, "re-download it"));
}
#endif

TEST_CASE("an unknown column names the columns present", "[text][errors]") {
  TempDir dir;
  write_file(dir / "a.jsonl", "{\"prompt\": \"x\", \"completion\": \"y\"}\n");
  auto e = text_error(with(dir, dir / "a.jsonl"));
  CHECK(contains(e, "a.jsonl:1: no field 'text' (fields: prompt, completion)"));
  CHECK(contains(e, "--dataset.text_column"));
  write_file(dir / "b.csv", "id,body\n1,hello\n");
  e = text_error(with(dir, dir / "b.csv"));
  CHECK(contains(e, "b.csv: no column 'text' (columns: id, body)"));
}

TEST_CASE("malformed lines are named by file and line", "[text][errors]") {
  TempDir dir;
  write_file(dir / "a.jsonl", "{\"text\": \"ok\"}\n\n{\"text\": \"broken\"\n");
  CHECK(contains(text_error(with(dir, dir / "a.jsonl")), "a.jsonl:3: not a JSON object"));
  write_file(dir / "b.jsonl", "{\"text\": 5}\n");
  CHECK(contains(text_error(with(dir, dir / "b.jsonl")), "b.jsonl:1: field 'text' is neither a string nor a list of messages"));
  write_file(dir / "c.csv", "text,n\n\"a, b\",1\n\"multi\nline\",2\nonly one field\n");
  CHECK(contains(text_error(with(dir, dir / "c.csv")), "c.csv:5: 1 fields where the header has 2"));
  write_file(dir / "d.csv", "text\n\"never closed\n");
  CHECK(contains(text_error(with(dir, dir / "d.csv")), "d.csv:2: a quoted field is never closed"));
  write_file(dir / "e.txt", "fine\nbad \xC3\x28 byte\n");
  CHECK(contains(text_error(with(dir, dir / "e.txt")), "e.txt:2: the text is not valid UTF-8"));
}

TEST_CASE("an empty dataset is an error, not zero samples", "[text][errors]") {
  TempDir dir;
  write_file(dir / "empty.txt", "\n\n\n");
  CHECK(contains(text_error(with(dir, dir / "empty.txt")), "the text dataset is empty"));
  write_file(dir / "empty.jsonl", "{\"text\": \"\"}\n");
  CHECK(contains(text_error(with(dir, dir / "empty.jsonl")), "the text dataset is empty"));
}

TEST_CASE("an unsupported tokenizer is refused by name", "[text][errors]") {
  TempDir dir;
  write_file(dir / "a.txt", "hello\n");
  auto json = slurp(text_tokenizers() + "/gpt2/tokenizer.json");
  const std::string unigram = "\"type\": \"BPE\"";
  const auto at = json.find(unigram);
  REQUIRE(at != std::string::npos);
  json.replace(at, unigram.size(), "\"type\": \"Unigram\"");
  write_file(dir / "tokenizer.json", json);
  auto options = with(dir, dir / "a.txt");
  options["tokenizer"] = dir / "tokenizer.json";
  CHECK(contains(text_error(options), "model type 'Unigram' is not supported"));
}
