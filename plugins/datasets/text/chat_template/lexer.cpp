// Splits a chat template into tokens, with Jinja's whitespace control (see lexer.hpp).
#include "chat_template/lexer.hpp"

#include <algorithm>
#include <charconv>

#include "chat_template/errors.hpp"
#include "chat_template/text.hpp"
#include "shardkit/error.hpp"
#include "utf8.hpp"

namespace shardkit::chat {

std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      out += source[i];
      continue;
    }
    out += '\n';
    if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

namespace {

constexpr auto npos = std::string_view::npos;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < src.size(); ++i)
      if (src[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    for (std::size_t pos = 0; pos < src_.size();) {
      const std::size_t tag = find_tag(pos);
      if (tag == npos) {
        add_text(pos, src_.substr(pos));
        break;
      }
      const char kind = src_[tag + 1];
      const char mod = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
      const std::string_view text = src_.substr(pos, tag - pos);
      if (mod == '-')
        add_text(pos, strip(text, nullptr, false, true));
      else if (mod != '+' && kind != '{')
        add_text(pos, lstrip_block(text));
      else
        add_text(pos, text);
      const std::size_t body = tag + 2 + (mod ? 1 : 0);
      pos = kind == '#' ? skip_comment(tag, body) : lex_tag(tag, body, kind == '%');
    }
    tokens_.push_back(make(TokenType::End, src_.size()));
    return std::move(tokens_);
  }

 private:
  Token make(TokenType type, std::size_t at, std::string text = {}) const {
    Token t;
    t.type = type;
    t.text = std::move(text);
    const auto line = static_cast<std::size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), at) -
                                               line_starts_.begin());
    const std::size_t start = line_starts_[line - 1];
    t.line = static_cast<int>(line);
    t.column = static_cast<int>(code_point_count(src_.substr(start, at - start)) + 1);
    return t;
  }

  std::string where(std::size_t at) const {
    const Token t = make(TokenType::End, at);
    return name_ + ":" + std::to_string(t.line) + ":" + std::to_string(t.column);
  }
  [[noreturn]] void fail(std::size_t at, const std::string& what) const { throw ConfigError(where(at) + ": " + what); }
  [[noreturn]] void refuse(std::size_t at, const std::string& construct) const {
    throw ConfigError(unsupported_message(where(at), construct));
  }

  void add_text(std::size_t at, std::string_view text) {
    if (!text.empty()) tokens_.push_back(make(TokenType::Text, at, std::string(text)));
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t at = src_.find('{', from); at != npos; at = src_.find('{', at + 1))
      if (at + 1 < src_.size() && (src_[at + 1] == '{' || src_[at + 1] == '%' || src_[at + 1] == '#')) return at;
    return npos;
  }

  // The length in bytes of the whitespace character at `at`, or 0.
  std::size_t space_at(std::size_t at) const {
    const auto b = static_cast<unsigned char>(src_[at]);
    if (b < 0x80) return is_space(b) ? 1 : 0;
    const std::size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    if (at + n > src_.size()) return 0;
    const auto cp = decode_utf8(src_.substr(at, n));
    return cp.size() == 1 && is_space(cp[0]) ? n : 0;
  }
  std::size_t skip_space(std::size_t at) const {
    for (std::size_t n; at < src_.size() && (n = space_at(at)) != 0;) at += n;
    return at;
  }

  // lstrip_blocks: whitespace between the start of a line and a block or comment tag goes. The text
  // starts a line when it holds a newline or the previous tag ended with one (trim_blocks' newline).
  std::string_view lstrip_block(std::string_view text) const {
    const auto newline = text.rfind('\n');
    const std::size_t from = newline == npos ? 0 : newline + 1;
    if (from == text.size() || (from == 0 && !line_starting_)) return text;
    const auto tail = decode_utf8(text.substr(from));
    return std::all_of(tail.begin(), tail.end(), is_space) ? text.substr(0, from) : text;
  }

  std::size_t skip_comment(std::size_t tag, std::size_t body) {
    const auto close = src_.find("#}", body);
    if (close == npos) fail(tag, "this comment is not closed: '#}' is missing");
    std::size_t end = close + 2;
    const char before = close > body ? src_[close - 1] : 0;
    if (before == '-')
      end = skip_space(end);
    else if (before != '+' && end < src_.size() && src_[end] == '\n')
      ++end;  // trim_blocks
    line_starting_ = src_[end - 1] == '\n';
    return end;
  }

  // Where the text after a tag end at `at` starts (its whitespace control applied); 0 when none is there.
  std::size_t tag_end(std::size_t at, bool block) const {
    const char close = block ? '%' : '}';
    const auto is = [this](std::size_t i, char c) { return i < src_.size() && src_[i] == c; };
    if (is(at, '-') && is(at + 1, close) && is(at + 2, '}')) return skip_space(at + 3);
    if (block && is(at, '+') && is(at + 1, '%') && is(at + 2, '}')) return at + 3;
    if (is(at, close) && is(at + 1, '}')) return at + 2 + (block && is(at + 2, '\n') ? 1 : 0);  // trim_blocks
    return 0;
  }

  std::size_t lex_tag(std::size_t tag, std::size_t at, bool block) {
    tokens_.push_back(make(block ? TokenType::BlockBegin : TokenType::VariableBegin, tag));
    if (block) {
      const std::size_t word = skip_space(at);
      if (src_.compare(word, 3, "raw") == 0 && (word + 3 >= src_.size() || !is_name_char(src_[word + 3])))
        refuse(word, "{% raw %}");
    }
    for (int depth = 0;;) {
      at = skip_space(at);
      if (at >= src_.size())
        fail(tag, block ? "this tag is not closed: '%}' is missing" : "this expression is not closed: '}}' is missing");
      if (depth == 0) {  // as in Jinja, an end inside open brackets is not an end
        if (const std::size_t end = tag_end(at, block)) {
          tokens_.push_back(make(block ? TokenType::BlockEnd : TokenType::VariableEnd, at));
          line_starting_ = src_[end - 1] == '\n';
          return end;
        }
      }
      at = lex_token(at, depth);
    }
  }

  std::size_t lex_token(std::size_t at, int& depth) {
    const char c = src_[at];
    if (c == '\'' || c == '"') return lex_string(at);
    if (is_digit(c)) return lex_number(at);
    if (is_name_start(c)) {
      std::size_t end = at;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      tokens_.push_back(make(TokenType::Name, at, std::string(src_.substr(at, end - at))));
      return end;
    }
    for (const std::string_view op : {"**", "//", "==", "!=", ">=", "<="}) {
      if (src_.substr(at, 2) == op) {
        tokens_.push_back(make(TokenType::Operator, at, std::string(op)));
        return at + 2;
      }
    }
    if (std::string_view("+-*/%~[](){}<>=.:|,;").find(c) == npos) {
      const auto b = static_cast<unsigned char>(c);
      fail(at, "unexpected character '" + std::string(src_.substr(at, b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2)) +
                   "' in a tag");
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    tokens_.push_back(make(TokenType::Operator, at, std::string(1, c)));
    return at + 1;
  }

  // The end of `(\d+_)*\d+` from `at` (`at` itself when no digit is there).
  std::size_t digits(std::size_t at) const {
    std::size_t i = at;
    while (i < src_.size() &&
           (is_digit(src_[i]) || (src_[i] == '_' && i > at && i + 1 < src_.size() && is_digit(src_[i + 1]))))
      ++i;
    return i;
  }
  // The end of an exponent `e[+-]digits` at `at` (`at` itself when none is there).
  std::size_t exponent(std::size_t at) const {
    if (at >= src_.size() || (src_[at] != 'e' && src_[at] != 'E')) return at;
    std::size_t i = at + 1;
    if (i < src_.size() && (src_[i] == '+' || src_[i] == '-')) ++i;
    const std::size_t end = digits(i);
    return end > i ? end : at;
  }

  std::size_t lex_number(std::size_t at) {
    const std::size_t whole = digits(at);
    std::size_t end = whole;
    bool is_float = false;
    if (at == 0 || src_[at - 1] != '.') {  // Jinja reads "x.0.5" as x[0][5], never as a float
      if (whole < src_.size() && src_[whole] == '.' && digits(whole + 1) > whole + 1)
        end = exponent(digits(whole + 1));
      else
        end = exponent(whole);
      is_float = end > whole;
    }
    if (!is_float && src_[at] == '0' && whole > at + 1 &&
        src_.substr(at, whole - at).find_first_not_of("0_") != npos)
      fail(at, "leading zeros are not allowed in an integer literal");
    if (!is_float && src_[at] == '0' && whole == at + 1 && whole < src_.size() &&
        std::string_view("xXoObB").find(src_[whole]) != npos)
      refuse(at, "an integer literal in base 2, 8 or 16");
    std::string clean;
    for (std::size_t i = at; i < end; ++i)
      if (src_[i] != '_') clean += src_[i];
    Token t = make(is_float ? TokenType::Float : TokenType::Integer, at, clean);
    const auto parsed = is_float ? std::from_chars(clean.data(), clean.data() + clean.size(), t.number)
                                 : std::from_chars(clean.data(), clean.data() + clean.size(), t.integer);
    if (parsed.ec != std::errc()) fail(at, "the number " + clean + " does not fit the renderer's 64-bit numbers");
    tokens_.push_back(std::move(t));
    return end;
  }

  // `n` hex digits at `at`, as a code point.
  char32_t hex(std::size_t at, int n, std::size_t escape) const {
    char32_t c = 0;
    for (int k = 0; k < n; ++k) {
      const char h = at + k < src_.size() ? src_[at + k] : 0;
      const int d = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
      if (d < 0) fail(escape, "malformed escape in a string literal: " + std::to_string(n) + " hex digits expected");
      c = c * 16 + static_cast<char32_t>(d);
    }
    if (c > 0x10FFFF) fail(escape, "the escape in this string literal is beyond Unicode");
    if (c >= 0xD800 && c <= 0xDFFF) refuse(escape, "a surrogate escape (\\ud800-\\udfff) in a string literal");
    return c;
  }

  // A string literal, its escapes decoded as Python's "unicode-escape" codec decodes them (as Jinja does).
  std::size_t lex_string(std::size_t at) {
    const char quote = src_[at];
    std::string value;
    std::size_t i = at + 1;
    for (;;) {
      if (i >= src_.size()) fail(at, "this string literal is not closed");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) fail(at, "this string literal is not closed");
      const std::size_t escape = i;
      const char e = src_[i + 1];
      i += 2;
      switch (e) {
        case '\n': break;  // a line continuation
        case '\\': case '\'': case '"': value += e; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'v': value += '\v'; break;
        case 'x': text::append_utf8(hex(i, 2, escape), value); i += 2; break;
        case 'u': text::append_utf8(hex(i, 4, escape), value); i += 4; break;
        case 'U': text::append_utf8(hex(i, 8, escape), value); i += 8; break;
        case 'N': refuse(escape, "a \\N{...} escape in a string literal");
        default:
          if (e >= '0' && e <= '7') {
            char32_t code = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i < src_.size() && src_[i] >= '0' && src_[i] <= '7'; ++k, ++i)
              code = code * 8 + static_cast<char32_t>(src_[i] - '0');
            text::append_utf8(code, value);
          } else if (static_cast<unsigned char>(e) >= 0x80) {
            refuse(escape, "a backslash before a non-ASCII character in a string literal");
          } else {  // Python keeps an unknown escape as it is
            value += '\\';
            value += e;
          }
      }
    }
    tokens_.push_back(make(TokenType::String, at, std::move(value)));
    return i + 1;
  }

  std::string_view src_;
  const std::string& name_;
  std::vector<std::size_t> line_starts_;
  std::vector<Token> tokens_;
  bool line_starting_ = true;  // whether the last tag ended with a newline (or nothing came before)
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& name) { return Lexer(source, name).run(); }

}  // namespace shardkit::chat
