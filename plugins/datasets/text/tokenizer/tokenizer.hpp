// A Hugging Face tokenizer.json (BPE: byte-level as GPT-2, Llama 3 and Qwen2 use, or with byte
// fallback as Llama 2, Mistral and Gemma use) in C++: encode and decode.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::text {

class Bpe;
class Normalizer;
class PreTokenizer;
class Decoder;
class AddedVocabulary;

/// What tokenizer.json's parts become once read (see tokenizer_json.cpp).
struct TokenizerParts {
  std::unique_ptr<Bpe> model;
  std::unique_ptr<Normalizer> normalizer;       ///< nullptr when null
  std::unique_ptr<PreTokenizer> pre_tokenizer;  ///< nullptr when null
  std::unique_ptr<AddedVocabulary> added;
  std::vector<std::uint32_t> prefix_ids;  ///< the single-sequence template's ids before $A
  std::vector<std::uint32_t> suffix_ids;  ///< ... and after it
  std::unique_ptr<Decoder> decoder;       ///< nullptr when null (tokens joined with spaces)
  std::string decoder_missing;            ///< the decoder type (or step) not supported, "" when all are
  std::optional<std::uint32_t> pad_id;    ///< tokenizer.json's padding.pad_id, when set
  ~TokenizerParts();
  TokenizerParts();
  TokenizerParts(TokenizerParts&&) noexcept;
};

/// Reads tokenizer.json's text. Unsupported features (another model, a normalizer, a
/// pre-tokenizer or post-processor tokenizers has but this does not; an unsupported decoder
/// only fails decode()) are one ConfigError naming
/// `source` and, for every such part, the field and what is supported; a malformed file is a
/// FormatError.
TokenizerParts parse_tokenizer_json(const std::string& json_text, const std::string& source);

/// A loaded tokenizer. encode() and decode() are thread-safe.
class Tokenizer {
 public:
  /// Loads `path`: a tokenizer.json file, or a folder holding one. A tokenizer_config.json
  /// beside it names the bos/eos/pad tokens; without it they are guessed (see bos_id()).
  /// Throws ConfigError naming the path when tokenizer.json is missing or unsupported,
  /// FormatError when a file is malformed.
  static std::shared_ptr<Tokenizer> load(const std::string& path);
  /// From tokenizer.json's text (`source` names it in errors); no tokenizer_config.json.
  static std::shared_ptr<Tokenizer> from_json(const std::string& json_text, const std::string& source);

  ~Tokenizer();

  /// Takes bos/eos/pad from tokenizer_config.json's text (`config_path` names it in errors), as
  /// load() does with the file beside tokenizer.json. FormatError when it is not JSON or names a
  /// token the tokenizer lacks.
  void apply_config(const std::string& config_text, const std::string& config_path);

  /// The ids of `text` (valid UTF-8, else FormatError), with the post-processor's special
  /// tokens (e.g. <|begin_of_text|>) when `add_special_tokens`. Appends to `out`.
  void encode(std::string_view text, bool add_special_tokens, std::vector<std::uint32_t>& out) const;
  /// The same, returned.
  std::vector<std::uint32_t> encode(std::string_view text, bool add_special_tokens) const;
  /// encode(text, false), and for each id the byte offset in `text` where the text it stands for
  /// ends (tokenizers' offsets, in bytes): id i covers [ends[i - 1], ends[i]) (0 for i = 0).
  void encode_with_offsets(std::string_view text, std::vector<std::uint32_t>& ids, std::vector<std::size_t>& ends) const;
  /// The text of `ids`; special tokens are left out when `skip_special_tokens`.
  /// Throws FormatError for an unknown id or a decoder type that is not supported.
  std::string decode(const std::vector<std::uint32_t>& ids, bool skip_special_tokens = false) const;

  /// Beginning-of-sequence id: tokenizer_config.json's bos_token, else the first token the
  /// post-processor puts before the text. Empty when neither exists.
  std::optional<std::uint32_t> bos_id() const { return bos_; }
  /// End-of-sequence id: tokenizer_config.json's eos_token, else the first of the special
  /// tokens <|end_of_text|>, <|endoftext|>, </s>, <eos> that exists.
  std::optional<std::uint32_t> eos_id() const { return eos_; }
  /// Padding id: tokenizer_config.json's pad_token, else tokenizer.json's padding.pad_id.
  std::optional<std::uint32_t> pad_id() const { return pad_; }
  /// Whether encode(text, true) puts the bos token before the text.
  bool adds_bos() const;
  /// The id of a token (added tokens first, then the model's vocabulary).
  std::optional<std::uint32_t> token_to_id(std::string_view token) const;
  /// One more than the largest id (model vocabulary and added tokens).
  std::size_t vocab_size() const;

 private:
  Tokenizer(TokenizerParts parts, std::string source);
  /// The ids of one piece of normalized text between added tokens; `at_start`: it begins the input.
  void encode_text(std::string_view text, bool at_start, std::vector<std::uint32_t>& out) const;
  /// Calls `piece(normalized, segment)` for each part of `text` between added tokens, in order,
  /// and `added(id, begin, end)` for each added token (offsets in `text`).
  template <class Piece, class Added>
  void split_text(std::string_view text, const Piece& piece, const Added& added) const;

  TokenizerParts parts_;
  std::string source_;
  std::optional<std::uint32_t> bos_, eos_, pad_;
};

}  // namespace shardkit::text
