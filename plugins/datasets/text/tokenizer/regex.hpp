// A PCRE2 regular expression in UTF + Unicode-property mode, as tokenizer.json pre-tokenizers need.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardkit::text {

/// One match: byte offsets [begin, end) into the searched text.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// A compiled pattern (JIT when available). Thread-safe: each search uses per-thread match state.
class Regex {
 public:
  /// Compiles `pattern` (Oniguruma/Rust syntax as tokenizer.json writes it: \p{L}, (?i:...),
  /// lookahead). `\s` and `\S` are read as Unicode White_Space, as Oniguruma does.
  /// Throws FormatError naming `what` and the PCRE2 message when it does not compile.
  Regex(const std::string& pattern, const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Every non-overlapping match in `text` (valid UTF-8), left to right; empty matches skipped.
  void find_all(std::string_view text, std::vector<Span>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// `text` with every regex metacharacter escaped (a literal `Split` pattern).
std::string escape_regex(const std::string& text);

}  // namespace shardkit::text
