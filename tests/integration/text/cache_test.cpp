// Tokenization is cached on disk: reused by a second load, redone when the data changes, safe with two ranks.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "text_test_util.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> cache_files(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "document number " + std::to_string(i) + " with some words, ünïcödé and 数字\n";
  return s;
}

}  // namespace

TEST_CASE("a second load reads the cache; changed data or tokenizer is tokenized again", "[text][cache]") {
  TempDir dir;
  const auto data = dir / "data.txt";
  write_file(data, lines(50));
  const std::map<std::string, shardkit::Value> options{{"path", data}, {"tokenizer", text_tokenizers() + "/llama3"},
                                                      {"max_seq_len", std::int64_t{32}}, {"cache_dir", dir / "cache"}};
  const auto first = all_samples(*open_text(options));
  auto files = cache_files(dir / "cache");
  REQUIRE(files.size() == 1);
  CHECK(files[0].size() > 7);
  CHECK(files[0].substr(files[0].size() - 7) == ".tokens");
  const auto written = fs::last_write_time(files[0]);

  // Unchanged inputs: the same file, not rewritten.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto second = all_samples(*open_text(options));
  CHECK(cache_files(dir / "cache") == files);
  CHECK(fs::last_write_time(files[0]) == written);
  CHECK(at::equal(first.at("input_ids"), second.at("input_ids")));

  // Changed data: a new cache entry, and the new document is in the samples.
  write_file(data, lines(60));
  const auto third = open_text(options);
  CHECK(cache_files(dir / "cache").size() == 2);
  CHECK(third->size() > static_cast<std::int64_t>(first.at("input_ids").size(0)));

  // Another tokenizer: another entry.
  auto other = options;
  other["tokenizer"] = text_tokenizers() + "/gpt2";
  open_text(other);
  CHECK(cache_files(dir / "cache").size() == 3);
}

TEST_CASE("a damaged cache file is replaced, not trusted", "[text][cache]") {
  TempDir dir;
  const auto data = dir / "data.txt";
  write_file(data, lines(20));
  const std::map<std::string, shardkit::Value> options{{"path", data}, {"tokenizer", text_tokenizers() + "/gpt2"},
                                                      {"max_seq_len", std::int64_t{16}}, {"cache_dir", dir / "cache"}};
  const auto good = all_samples(*open_text(options));
  const auto file = cache_files(dir / "cache").at(0);
  const auto size = fs::file_size(file);
  fs::resize_file(file, size - 4);
  const auto again = all_samples(*open_text(options));
  CHECK(at::equal(good.at("input_ids"), again.at("input_ids")));
  CHECK(fs::file_size(file) == size);  // rewritten whole
  CHECK(cache_files(dir / "cache").size() == 1);
}

TEST_CASE("two ranks loading at once get the same samples and one whole cache file", "[text][cache]") {
  TempDir dir;
  const auto data = dir / "data.txt";
  write_file(data, lines(400));
  const std::map<std::string, shardkit::Value> options{{"path", data}, {"tokenizer", text_tokenizers() + "/llama3"},
                                                      {"max_seq_len", std::int64_t{64}}, {"cache_dir", dir / "cache"},
                                                      {"num_threads", std::int64_t{1}}};
  shardkit::Runtime rank0, rank1;
  rank0.world_size = rank1.world_size = 2;
  rank0.local_world_size = rank1.local_world_size = 2;
  rank1.rank = rank1.local_rank = 1;
  std::shared_ptr<shardkit::Dataset> a, b;
  std::thread t0([&] { a = open_text(options, nullptr, &rank0); });
  std::thread t1([&] { b = open_text(options, nullptr, &rank1); });
  t0.join();
  t1.join();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(at::equal(all_samples(*a).at("input_ids"), all_samples(*b).at("input_ids")));
  const auto files = cache_files(dir / "cache");
  REQUIRE(files.size() == 1);  // no temporary file left behind
  const auto c = open_text(options, nullptr, &rank1);
  CHECK(at::equal(all_samples(*a).at("input_ids"), all_samples(*c).at("input_ids")));
}

TEST_CASE("tokenizing more than 1 MB logs progress with documents per second", "[text][cache]") {
  TempDir dir;
  const auto data = dir / "big.txt";
  write_file(data, lines(20000));  // ~1.3 MB
  REQUIRE(fs::file_size(data) > (1u << 20));
  std::ostringstream out;
  auto log = std::make_shared<spdlog::logger>("text-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  const std::map<std::string, shardkit::Value> options{{"path", data}, {"tokenizer", text_tokenizers() + "/gpt2"},
                                                      {"cache_dir", dir / "cache"}};
  open_text(options, nullptr, nullptr, log);
  INFO(out.str());
  CHECK(contains(out.str(), "tokenizing 20000 documents"));
  CHECK(contains(out.str(), "tokenized 100% (20000 documents"));
  CHECK(contains(out.str(), "documents/s"));
  std::ostringstream small_out;
  auto small_log = std::make_shared<spdlog::logger>("text-test-small", std::make_shared<spdlog::sinks::ostream_sink_mt>(small_out));
  write_file(dir / "small.txt", lines(10));
  open_text({{"path", dir / "small.txt"}, {"tokenizer", text_tokenizers() + "/gpt2"}, {"cache_dir", dir / "cache"}},
            nullptr, nullptr, small_log);
  CHECK_FALSE(contains(small_out.str(), "tokenized 100%"));
  // The second load reads the cache and says so.
  std::ostringstream again;
  auto again_log = std::make_shared<spdlog::logger>("text-test-again", std::make_shared<spdlog::sinks::ostream_sink_mt>(again));
  open_text(options, nullptr, nullptr, again_log);
  CHECK(contains(again.str(), "read from the token cache"));
  CHECK_FALSE(contains(again.str(), "tokenizing"));
}
