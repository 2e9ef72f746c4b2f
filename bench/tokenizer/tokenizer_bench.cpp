// Tokens per second of the C++ tokenizer: encode every record of a corpus on N threads, best of R runs.
//
// usage: bench_tokenizer TOKENIZER_DIR CORPUS.bin THREADS [REPEATS]
// CORPUS.bin holds records "<byte length>\n<bytes>\n" (tests/unit/tokenizer/make_tokenizers.py).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tokenizer/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TOKENIZER_DIR CORPUS.bin THREADS [REPEATS]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const auto data = buffer.str();
  std::vector<std::string> texts;
  for (std::size_t at = 0; at < data.size();) {
    const auto nl = data.find('\n', at);
    const auto n = std::stoull(data.substr(at, nl - at));
    texts.push_back(data.substr(nl + 1, n));
    at = nl + 1 + n + 1;
  }
  const int threads = std::max(1, std::atoi(argv[3]));
  const int repeats = argc > 4 ? std::max(1, std::atoi(argv[4])) : 3;
  const auto load_start = std::chrono::steady_clock::now();
  const auto tokenizer = shardkit::text::Tokenizer::load(argv[1]);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  double best = 1e30;
  std::size_t tokens = 0;
  for (int r = 0; r < repeats; ++r) {
    // A fresh tokenizer each run would also time loading; the per-word cache is part of the
    // design, and Python `tokenizers` keeps its cache across calls too.
    std::atomic<std::size_t> next{0}, count{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        std::vector<std::uint32_t> ids;
        std::size_t local = 0;
        for (std::size_t i; (i = next.fetch_add(64)) < texts.size();)
          for (std::size_t j = i; j < std::min(texts.size(), i + 64); ++j) {
            ids.clear();
            tokenizer->encode(texts[j], true, ids);
            local += ids.size();
          }
        count += local;
      });
    for (auto& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    tokens = count;
  }
  std::printf("{\"impl\": \"shardkit\", \"threads\": %d, \"lines\": %zu, \"tokens\": %zu, \"seconds\": %.4f, "
              "\"tokens_per_s\": %.0f, \"load_s\": %.3f}\n",
              threads, texts.size(), tokens, best, tokens / best, load_s);
  return 0;
}
