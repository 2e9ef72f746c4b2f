// Parallel tokenization: chunks of documents taken from a shared counter, joined back in order.
#include "tokenize_documents.hpp"

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "shardkit/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace {

constexpr std::size_t kChunk = 64;
constexpr std::size_t kProgressBytes = 1 << 20;

}  // namespace

TokenizedDocs tokenize_documents(const Documents& docs, const Tokenizer& tokenizer, int threads,
                                 spdlog::logger& log) {
  const std::size_t n = docs.texts.size();
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<std::int32_t>> chunk_tokens(chunks);
  std::vector<std::vector<std::int64_t>> chunk_lengths(chunks);
  std::size_t total_bytes = 0;
  for (const auto& t : docs.texts) total_bytes += t.size();

  std::atomic<std::size_t> next{0}, done_docs{0};
  std::mutex mutex;
  std::condition_variable finished;
  int running = std::max(1, threads);
  std::exception_ptr error;
  const auto work = [&] {
    std::vector<std::uint32_t> ids;
    try {
      for (std::size_t c; (c = next.fetch_add(1)) < chunks;) {
        const auto end = std::min(n, (c + 1) * kChunk);
        for (std::size_t i = c * kChunk; i < end; ++i) {
          ids.clear();
          try {
            tokenizer.encode(docs.texts[i], true, ids);
          } catch (const Error& e) {
            throw FormatError(docs.where[i] + ": " + e.what());
          }
          chunk_tokens[c].insert(chunk_tokens[c].end(), ids.begin(), ids.end());
          chunk_lengths[c].push_back(static_cast<std::int64_t>(ids.size()));
        }
        done_docs += end - c * kChunk;
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!error) error = std::current_exception();
      next = chunks;  // the others stop at their next chunk
    }
    std::lock_guard lock(mutex);
    if (--running == 0) finished.notify_all();
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) pool.emplace_back(work);
  {
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::seconds(5), [&] { return running == 0; }))
      if (total_bytes > kProgressBytes) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const auto d = done_docs.load();
        log.info("text dataset: tokenizing {:.0f}% ({} of {} documents, {:.0f} documents/s)", 100.0 * d / n, d, n,
                 d / s);
      }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  TokenizedDocs out;
  std::size_t total = 0;
  for (const auto& c : chunk_tokens) total += c.size();
  out.tokens.reserve(total);
  out.offsets.reserve(n + 1);
  for (std::size_t c = 0; c < chunks; ++c) {
    out.tokens.insert(out.tokens.end(), chunk_tokens[c].begin(), chunk_tokens[c].end());
    for (const auto len : chunk_lengths[c]) out.offsets.push_back(out.offsets.back() + len);
  }
  if (total_bytes > kProgressBytes) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log.info("text dataset: tokenized 100% ({} documents, {} tokens, {:.0f} documents/s, {:.0f} tokens/s)", n, total,
             n / s, total / s);
  }
  return out;
}

}  // namespace shardkit::text
