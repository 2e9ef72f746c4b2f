// Tokenizing many documents on several threads, with progress lines for large inputs.
#pragma once

#include <memory>

#include "documents.hpp"
#include "token_cache.hpp"

namespace spdlog {
class logger;
}

namespace shardkit::text {

class ChatFormat;
class Tokenizer;

/// Encodes each document with `tokenizer` (add_special_tokens = true) on `threads` threads.
/// When the documents exceed 1 MB, logs progress (percent, documents per second) every few
/// seconds. A document the tokenizer refuses is a FormatError naming its file:line.
TokenizedDocs tokenize_documents(const Documents& docs, const Tokenizer& tokenizer, int threads,
                                 spdlog::logger& log);

/// Renders and tokenizes each conversation with `format`, keeping which tokens are trained on.
/// A conversation that cannot be rendered is a FormatError naming its file:line and index (the
/// first such one in file order), or,
/// with `skip_bad`, is left out: counted in `skipped`, the first one's problem logged as a warning.
TokenizedDocs tokenize_conversations(const Documents& docs, const ChatFormat& format, bool skip_bad, int threads,
                                     spdlog::logger& log);

}  // namespace shardkit::text
