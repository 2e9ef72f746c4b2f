// The on-disk cache of tokenized documents: keyed by data files, tokenizer and options; written atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardkit::text {

/// Every document's token ids, end to end: document i is tokens[offsets[i], offsets[i + 1]).
struct TokenizedDocs {
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> offsets{0};
  /// Conversations: 1 where the token is trained on (a label), 0 where it is context; one per
  /// token. Empty when every token is trained on (plain text, or no response-only loss).
  std::vector<std::uint8_t> trained;
  /// Conversations left out by --dataset.on_bad_example=skip.
  std::uint64_t skipped = 0;
  /// Whether the documents are conversations (rendered with a chat template).
  bool chat = false;
  /// Number of documents.
  std::size_t size() const { return offsets.size() - 1; }
};

/// The cache folder: `configured` when set, else $XDG_CACHE_HOME/shardkit/tokenized, else
/// ~/.cache/shardkit/tokenized.
std::string cache_folder(const std::string& configured);

/// A hex key over: the format version, the bytes of each file in `tokenizer_files` (those
/// present), each data file's path, size and modification time, and `options` (text that
/// names every option that changes the tokens).
std::string cache_key(const std::vector<std::string>& data_files, const std::vector<std::string>& tokenizer_files,
                      const std::string& options);

/// The cached documents at `path`; nullopt when there is no such file or it is damaged
/// (`problem` then says what was wrong, "" when simply absent).
std::optional<TokenizedDocs> read_token_cache(const std::string& path, std::string& problem);

/// Writes `docs` to `path` through a temporary file in the same folder and a rename, so a
/// reader sees either no file or a complete one. Throws FormatError naming the path.
void write_token_cache(const std::string& path, const TokenizedDocs& docs);

}  // namespace shardkit::text
