// Pre-tokenizers of tokenizer.json: Split (regex or literal), ByteLevel, and Sequence of them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "regex.hpp"

namespace shardkit::text {

/// Splits pieces of text into smaller pieces (each later given to the model on its own).
class PreTokenizer {
 public:
  virtual ~PreTokenizer();
  /// Replaces `pieces` by their split (and possibly rewritten) forms, dropping empty ones.
  virtual void apply(std::vector<std::string>& pieces) const = 0;
  /// Whether pieces come out in the byte-level alphabet (a ByteLevel step ran).
  virtual bool byte_level() const { return false; }
};

/// What Split does with the matches of its pattern.
enum class SplitBehavior { Isolated, Removed };

/// `Split`: pattern matches become pieces of their own (Isolated) or are dropped (Removed).
class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(const std::string& regex, SplitBehavior behavior, bool invert, const std::string& what);
  void apply(std::vector<std::string>& pieces) const override;

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

/// `ByteLevel`: optional leading space, optional GPT-2 regex split, then the byte-level alphabet.
class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void apply(std::vector<std::string>& pieces) const override;
  bool byte_level() const override { return true; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPreTokenizer> split_;
};

/// `Sequence`: each step applied to the pieces of the previous one.
class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps);
  void apply(std::vector<std::string>& pieces) const override;
  bool byte_level() const override;

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

/// GPT-2's pre-tokenizer pattern (ByteLevel with use_regex=true).
extern const char* const kGpt2Pattern;

}  // namespace shardkit::text
