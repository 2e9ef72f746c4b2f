// Added tokens (special or not): found in the raw text before pre-tokenization, each one id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardkit::text {

/// One entry of tokenizer.json's `added_tokens`.
struct AddedToken {
  std::uint32_t id = 0;
  std::string content;
  bool special = false;      ///< skipped by decode(skip_special_tokens)
  bool single_word = false;  ///< only matches when not inside a word
  bool lstrip = false;       ///< takes the whitespace on its left
  bool rstrip = false;       ///< takes the whitespace on its right
  bool normalized = false;   ///< matched after normalization (no normalizer: the same text)
};

/// A piece of the input: plain text to pre-tokenize (id < 0) or one added token.
struct Segment {
  std::size_t begin = 0, end = 0;
  std::int64_t id = -1;
};

class Regex;
class Normalizer;

/// The added vocabulary: finds its tokens in text leftmost-longest first, as tokenizers does.
class AddedVocabulary {
 public:
  /// `normalizer` (may be nullptr) normalizes the content of the tokens with normalized=true,
  /// as they are looked for in normalized text.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);
  ~AddedVocabulary();

  /// Splits raw `text` at the tokens with normalized=false: segments covering it in order.
  void split_raw(std::string_view text, std::vector<Segment>& out) const;
  /// Splits normalized `text` at the tokens with normalized=true.
  void split_normalized(std::string_view text, std::vector<Segment>& out) const;
  /// The added token with this id, or nullptr.
  const AddedToken* by_id(std::uint32_t id) const;
  /// The added token with this content, or nullptr.
  const AddedToken* by_content(std::string_view content) const;
  /// The string decoding starts from for `token` (one of tokens()): its content, normalized when
  /// normalized=true, as tokenizers hands it to the decoder.
  const std::string& decoding_form(const AddedToken& token) const {
    return match_[static_cast<std::size_t>(&token - tokens_.data())];
  }
  /// Every added token, in tokenizer.json's order.
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  struct Set {
    std::vector<std::vector<std::size_t>> by_first_byte;  // 256 lists of token indices, longest first
    bool empty = true;
  };
  void find(std::string_view text, std::size_t base, const Set& set, std::vector<Segment>& out) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> match_;  // what each token is looked for as: its content, normalized when normalized=true
  std::unordered_map<std::uint32_t, std::size_t> by_id_;
  std::unordered_map<std::string_view, std::size_t> by_content_;
  Set raw_, normalized_;
  std::unique_ptr<Regex> word_char_;
};

}  // namespace shardkit::text
