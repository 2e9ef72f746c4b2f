// Parallel tokenization: chunks of documents taken from a shared counter, joined back in order.
#include "tokenize_documents.hpp"

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "chat_format.hpp"
#include "shardkit/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace {

constexpr std::size_t kChunk = 64;
constexpr std::size_t kProgressBytes = 1 << 20;

/// Encodes document `index` into `ids` (and, for conversations, `trained`); false when the
/// document is left out.
using EncodeOne =
    std::function<bool(std::size_t index, std::vector<std::uint32_t>& ids, std::vector<std::uint8_t>& trained)>;

// Documents [0, n) encoded by `encode` on `threads` threads; `with_trained` keeps the flags.
TokenizedDocs tokenize_all(std::size_t n, std::size_t total_bytes, const EncodeOne& encode, bool with_trained,
                           int threads, spdlog::logger& log) {
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<std::int32_t>> chunk_tokens(chunks);
  std::vector<std::vector<std::uint8_t>> chunk_trained(chunks);
  std::vector<std::vector<std::int64_t>> chunk_lengths(chunks);
  std::atomic<std::uint64_t> skipped{0};

  std::atomic<std::size_t> next{0}, done_docs{0};
  std::mutex mutex;
  std::condition_variable finished;
  int running = std::max(1, threads);
  std::exception_ptr error;
  const auto work = [&] {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> trained;
    try {
      for (std::size_t c; (c = next.fetch_add(1)) < chunks;) {
        const auto end = std::min(n, (c + 1) * kChunk);
        for (std::size_t i = c * kChunk; i < end; ++i) {
          ids.clear();
          trained.clear();
          if (!encode(i, ids, trained)) {
            ++skipped;
            continue;
          }
          chunk_tokens[c].insert(chunk_tokens[c].end(), ids.begin(), ids.end());
          if (with_trained) {
            if (trained.empty()) trained.assign(ids.size(), 1);
            chunk_trained[c].insert(chunk_trained[c].end(), trained.begin(), trained.end());
          }
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
  if (with_trained) out.trained.reserve(total);
  for (std::size_t c = 0; c < chunks; ++c) {
    out.tokens.insert(out.tokens.end(), chunk_tokens[c].begin(), chunk_tokens[c].end());
    out.trained.insert(out.trained.end(), chunk_trained[c].begin(), chunk_trained[c].end());
    for (const auto len : chunk_lengths[c]) out.offsets.push_back(out.offsets.back() + len);
  }
  out.skipped = skipped;
  if (total_bytes > kProgressBytes) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log.info("text dataset: tokenized 100% ({} documents, {} tokens, {:.0f} documents/s, {:.0f} tokens/s)", n, total,
             n / s, total / s);
  }
  return out;
}

}  // namespace

TokenizedDocs tokenize_documents(const Documents& docs, const Tokenizer& tokenizer, int threads,
                                 spdlog::logger& log) {
  std::size_t total_bytes = 0;
  for (const auto& t : docs.texts) total_bytes += t.size();
  const EncodeOne encode = [&](std::size_t i, std::vector<std::uint32_t>& ids, std::vector<std::uint8_t>&) {
    try {
      tokenizer.encode(docs.texts[i], true, ids);
    } catch (const Error& e) {
      throw FormatError(docs.where[i] + ": " + e.what());
    }
    return true;
  };
  return tokenize_all(docs.texts.size(), total_bytes, encode, false, threads, log);
}

TokenizedDocs tokenize_conversations(const Documents& docs, const ChatFormat& format, bool skip_bad, int threads,
                                     spdlog::logger& log) {
  std::mutex first_mutex;
  std::string first_problem;
  std::size_t first_index = docs.conversations.size();
  const EncodeOne encode = [&](std::size_t i, std::vector<std::uint32_t>& ids, std::vector<std::uint8_t>& trained) {
    try {
      auto tokens = format.tokenize(docs.conversations[i]);
      ids = std::move(tokens.ids);
      trained = std::move(tokens.trained);
      return true;
    } catch (const Error& e) {
      // The first bad conversation in file order is the one reported, whichever thread met it.
      std::lock_guard lock(first_mutex);
      if (i < first_index) {
        first_index = i;
        first_problem = docs.where[i] + ": conversation " + std::to_string(i) + ": " + e.what();
      }
      return false;
    }
  };
  // Conversations are sized by their JSON, about their rendered size.
  std::size_t total_bytes = 0;
  for (const auto& c : docs.conversations) total_bytes += c.is_array() ? 64 * c.as_array().size() : 0;
  auto out = tokenize_all(docs.conversations.size(), total_bytes, encode, format.response_only(), threads, log);
  if (out.skipped && !skip_bad)
    throw FormatError(first_problem + " (--dataset.on_bad_example=skip leaves such conversations out)");
  if (out.skipped)
    log.warn("text dataset: {} of {} conversations could not be rendered and were left out "
             "(--dataset.on_bad_example=skip); the first: {}",
             out.skipped, docs.conversations.size(), first_problem);
  return out;
}

}  // namespace shardkit::text
