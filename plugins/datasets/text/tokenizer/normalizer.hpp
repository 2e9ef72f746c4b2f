// Normalizers of tokenizer.json (NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace, Strip and
// Sequence), each keeping where every byte of its output came from in the text it was given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::text {

class Regex;

/// A text as normalizers change it, with its alignment to the text it started as: `ends[i]` is
/// the byte offset in the original text where the character that byte i of `text` came from
/// ends (0 for text inserted before everything, as Prepend inserts).
struct NormalizedText {
  std::string text;
  std::vector<std::uint32_t> ends;

  /// `original` unchanged, each byte aligned to itself.
  static NormalizedText of(std::string_view original);
  /// The offset in the original text where normalized bytes [0, end) end (0 when end is 0).
  std::size_t original_end(std::size_t end) const { return end == 0 ? 0 : ends[end - 1]; }
};

/// One normalizer: rewrites a text in place, keeping its alignment.
class Normalizer {
 public:
  virtual ~Normalizer();
  virtual void apply(NormalizedText& text) const = 0;
  /// `text` normalized (no alignment kept): how an added token with normalized=true is matched.
  std::string normalize(std::string_view text) const;
};

/// Unicode normalization forms, as Rust's unicode-normalization applies them.
enum class UnicodeForm { NFC, NFD, NFKC, NFKD };

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
  void apply(NormalizedText& text) const override;

 private:
  UnicodeForm form_;
};

/// `Lowercase`: each character's full lowercase mapping (Rust's char::to_lowercase).
class LowercaseNormalizer final : public Normalizer {
 public:
  void apply(NormalizedText& text) const override;
};

/// `Prepend`: `prefix` before a text that is not empty.
class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void apply(NormalizedText& text) const override;

 private:
  std::string prefix_;
};

/// `Replace`: every match of a pattern (a literal string or a regex) becomes `content`.
class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(const std::string& regex, std::string content, const std::string& what);
  ~ReplaceNormalizer() override;
  void apply(NormalizedText& text) const override;

 private:
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

/// `Strip`: Unicode white space removed from the left and/or the right end.
class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void apply(NormalizedText& text) const override;

 private:
  bool left_, right_;
};

/// `Sequence`: each step applied to the output of the previous one.
class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void apply(NormalizedText& text) const override;

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace shardkit::text
