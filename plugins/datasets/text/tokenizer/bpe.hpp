// The BPE model of a tokenizer.json: vocabulary, ranked merges, and a cache of merged pre-tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shardkit::text {

/// Hash and equality that let string maps be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
/// A string -> id map searchable by string_view.
using TokenMap = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

/// The model's settings besides vocabulary and merges (tokenizer.json field names).
struct BpeSettings {
  std::optional<std::string> unk_token;           ///< null: unknown characters are dropped
  std::string continuing_subword_prefix;          ///< "" when null
  std::string end_of_word_suffix;                 ///< "" when null
  bool fuse_unk = false;                          ///< consecutive unknowns become one unk
  bool ignore_merges = false;                     ///< a pre-token in the vocabulary is one token
  bool byte_fallback = false;                     ///< a character not in the vocabulary becomes <0xXX> tokens
};

/// Byte-pair encoding as Hugging Face tokenizers applies it: lowest merge rank first, leftmost
/// first among equal ranks. Thread-safe.
class Bpe {
 public:
  /// Throws FormatError naming `source` when a merge names a token the vocabulary lacks.
  Bpe(TokenMap vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeSettings settings,
      const std::string& source);
  ~Bpe();

  /// Appends the ids of one pre-token.
  void tokenize(std::string_view word, std::vector<std::uint32_t>& out) const;
  /// The id of `token` in the vocabulary.
  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  /// The token of `id`, or nullptr when the vocabulary has no such id.
  const std::string* id_to_token(std::uint32_t id) const;
  /// Number of entries in the vocabulary.
  std::size_t vocab_size() const { return vocab_.size(); }
  /// The id of unk_token, when there is one.
  std::optional<std::uint32_t> unk_id() const { return unk_id_; }
  /// Whether characters outside the vocabulary become <0xXX> tokens.
  bool byte_fallback() const { return settings_.byte_fallback; }
  /// One more than the largest id in the vocabulary.
  std::size_t id_limit() const { return by_id_.size(); }

 private:
  void merge_word(std::string_view word, std::vector<std::uint32_t>& out) const;
  /// With byte_fallback: the <0xXX> ids of `piece`'s bytes into `ids`; false when off or one is missing.
  bool byte_fallback_ids(std::string_view piece, std::vector<std::uint32_t>& ids) const;

  TokenMap vocab_;
  std::vector<const std::string*> by_id_;
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> merges_;  // pair -> (rank, new id)
  BpeSettings settings_;
  std::optional<std::uint32_t> unk_id_;
  std::vector<std::int64_t> byte_ids_;  // byte_fallback: the id of "<0xXX>" per byte value, -1 when absent
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

}  // namespace shardkit::text
