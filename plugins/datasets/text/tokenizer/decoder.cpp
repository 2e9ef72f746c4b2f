// The decoding steps, each as tokenizers' decode_chain defines it.
#include "decoder.hpp"

#include "byte_level.hpp"
#include "regex.hpp"

namespace shardkit::text {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/// The code points of `text` with the byte offset where each starts (and the end as the last).
std::vector<std::size_t> char_starts(const std::string& text) {
  std::vector<std::size_t> starts;
  for (std::size_t at = 0; at < text.size();) {
    starts.push_back(at);
    next_code_point(text, at);
  }
  starts.push_back(text.size());
  return starts;
}

}  // namespace

Decoder::~Decoder() = default;

int byte_fallback_value(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  const int hi = hex_digit(token[3]), lo = hex_digit(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void ByteLevelDecoder::apply(std::vector<std::string>& tokens) const {
  std::string bytes, own;
  for (const auto& token : tokens) {
    own.clear();
    bool all = true;
    for (std::size_t at = 0; at < token.size();) {
      const int b = byte_of_code_point(next_code_point(token, at));
      if (b < 0) {
        all = false;
        break;
      }
      own += static_cast<char>(b);
    }
    bytes += all ? own : token;
  }
  tokens.assign(1, utf8_lossy(bytes));
}

void ByteFallbackDecoder::apply(std::vector<std::string>& tokens) const {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string bytes;
  const auto flush = [&] {
    if (bytes.empty()) return;
    std::size_t bad = 0;
    if (valid_utf8(bytes, bad)) out.push_back(bytes);
    else out.insert(out.end(), bytes.size(), "\xEF\xBF\xBD");
    bytes.clear();
  };
  for (auto& token : tokens) {
    if (const int b = byte_fallback_value(token); b >= 0) {
      bytes += static_cast<char>(b);
      continue;
    }
    flush();
    out.push_back(std::move(token));
  }
  flush();
  tokens = std::move(out);
}

void FuseDecoder::apply(std::vector<std::string>& tokens) const {
  std::string joined;
  for (const auto& t : tokens) joined += t;
  tokens.assign(1, std::move(joined));
}

void StripDecoder::apply(std::vector<std::string>& tokens) const {
  for (auto& token : tokens) {
    const auto starts = char_starts(token);
    const std::size_t chars = starts.size() - 1;
    const auto is_content = [&](std::size_t i) {
      std::size_t at = starts[i];
      return next_code_point(token, at) == content_;
    };
    std::size_t first = 0, last = chars;
    for (std::size_t i = 0; i < start_ && i < chars && is_content(i); ++i) first = i + 1;
    // As tokenizers: the trailing cut does not stop at the leading one.
    for (std::size_t i = 0; i < stop_ && i < chars && is_content(chars - i - 1); ++i) last = chars - i - 1;
    token = last > first ? token.substr(starts[first], starts[last] - starts[first]) : std::string();
  }
}

ReplaceDecoder::ReplaceDecoder(const std::string& regex, std::string content, const std::string& what)
    : regex_(std::make_unique<Regex>(regex, what)), content_(std::move(content)) {}

ReplaceDecoder::~ReplaceDecoder() = default;

void ReplaceDecoder::apply(std::vector<std::string>& tokens) const {
  std::vector<Span> matches;
  for (auto& token : tokens) {
    matches.clear();
    regex_->find_all(token, matches);
    if (matches.empty()) continue;
    std::string out;
    std::size_t prev = 0;
    for (const auto& m : matches) {
      out.append(token, prev, m.begin - prev);
      out += content_;
      prev = m.end;
    }
    out.append(token, prev, std::string::npos);
    token = std::move(out);
  }
}

void MetaspaceDecoder::apply(std::vector<std::string>& tokens) const {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string out;
    for (std::size_t at = 0; at < tokens[i].size();) {
      const auto begin = at;
      const auto c = next_code_point(tokens[i], at);
      if (c != replacement_) out.append(tokens[i], begin, at - begin);
      else if (i != 0 || !prepends_) out += ' ';
    }
    tokens[i] = std::move(out);
  }
}

void SequenceDecoder::apply(std::vector<std::string>& tokens) const {
  for (const auto& step : steps_) step->apply(tokens);
}

}  // namespace shardkit::text
