// Tokenizing many documents on several threads, with progress lines for large inputs.
#pragma once

#include <memory>

#include "documents.hpp"
#include "token_cache.hpp"

namespace spdlog {
class logger;
}

namespace shardkit::text {

class Tokenizer;

/// Encodes each document with `tokenizer` (add_special_tokens = true) on `threads` threads.
/// When the documents exceed 1 MB, logs progress (percent, documents per second) every few
/// seconds. A document the tokenizer refuses is a FormatError naming its file:line.
TokenizedDocs tokenize_documents(const Documents& docs, const Tokenizer& tokenizer, int threads,
                                 spdlog::logger& log);

}  // namespace shardkit::text
