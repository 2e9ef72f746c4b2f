// Pre-tokenizers of tokenizer.json: Split (regex or literal), ByteLevel, Metaspace, and Sequence of them.
#pragma once

#include <cstdint>
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
  /// `at_start`: the first piece starts the whole text (not after an added token), which
  /// Metaspace's prepend_scheme "first" asks.
  virtual void apply(std::vector<std::string>& pieces, bool at_start) const = 0;
  /// Whether pieces come out in the byte-level alphabet (a ByteLevel step ran).
  virtual bool byte_level() const { return false; }
  /// The replacement character a Metaspace step put for spaces, or "" when none ran.
  virtual std::string metaspace_replacement() const { return {}; }
};

/// What Split does with the matches of its pattern (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };

/// `Split`: pattern matches become pieces of their own (Isolated), are dropped (Removed), join
/// the piece before or after them, or runs of matches and of non-matches become pieces (Contiguous).
class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(const std::string& regex, SplitBehavior behavior, bool invert, const std::string& what);
  void apply(std::vector<std::string>& pieces, bool at_start) const override;

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
};

/// `ByteLevel`: optional leading space, optional GPT-2 regex split, then the byte-level alphabet.
class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void apply(std::vector<std::string>& pieces, bool at_start) const override;
  bool byte_level() const override { return true; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<SplitPreTokenizer> split_;
};

/// When Metaspace puts its replacement character before a piece that does not start with one.
enum class PrependScheme { Always, First, Never };

/// `Metaspace`: spaces become the replacement character (U+2581 "▁" as a rule), one is put
/// before a piece as `scheme` says, and with `split` each replacement character starts a piece.
class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split);
  void apply(std::vector<std::string>& pieces, bool at_start) const override;
  std::string metaspace_replacement() const override { return replacement_; }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

/// `Sequence`: each step applied to the pieces of the previous one.
class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps);
  void apply(std::vector<std::string>& pieces, bool at_start) const override;
  bool byte_level() const override;
  std::string metaspace_replacement() const override;

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

/// GPT-2's pre-tokenizer pattern (ByteLevel with use_regex=true).
extern const char* const kGpt2Pattern;

}  // namespace shardkit::text
