// Decoders of tokenizer.json: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace and
// Sequence, each turning the list of token strings into another list, as tokenizers chains them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardkit::text {

class Regex;

/// One decoding step over the tokens' strings; the decoded text is the final list joined.
class Decoder {
 public:
  virtual ~Decoder();
  virtual void apply(std::vector<std::string>& tokens) const = 0;
};

/// `ByteLevel`: each token's byte stand-ins become bytes (a token with any other character is
/// kept as its own bytes), all joined into one string, invalid UTF-8 replaced by U+FFFD.
class ByteLevelDecoder final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override;
};

/// `ByteFallback`: runs of <0xXX> tokens become the text of their bytes, or one U+FFFD per
/// byte when those bytes are not valid UTF-8.
class ByteFallbackDecoder final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override;
};

/// `Fuse`: all tokens joined into one.
class FuseDecoder final : public Decoder {
 public:
  void apply(std::vector<std::string>& tokens) const override;
};

/// `Strip`: up to `start` leading and `stop` trailing copies of the character `content` cut
/// from each token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::uint32_t content, std::size_t start, std::size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  void apply(std::vector<std::string>& tokens) const override;

 private:
  std::uint32_t content_;
  std::size_t start_, stop_;
};

/// `Replace`: every match of a pattern in each token becomes `content`.
class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(const std::string& regex, std::string content, const std::string& what);
  ~ReplaceDecoder() override;
  void apply(std::vector<std::string>& tokens) const override;

 private:
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

/// `Metaspace`: the replacement character becomes a space, except in the first token when the
/// pre-tokenizer prepended one (prepend_scheme other than "never").
class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::uint32_t replacement, bool prepends) : replacement_(replacement), prepends_(prepends) {}
  void apply(std::vector<std::string>& tokens) const override;

 private:
  std::uint32_t replacement_;
  bool prepends_;
};

/// `Sequence`: each step applied to the output of the previous one.
class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void apply(std::vector<std::string>& tokens) const override;

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

/// The byte of a byte-fallback token "<0xXX>" (exactly six characters), or -1.
int byte_fallback_value(const std::string& token);

}  // namespace shardkit::text
