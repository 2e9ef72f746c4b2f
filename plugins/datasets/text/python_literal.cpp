// A recursive-descent reader for the literals ast.literal_eval accepts in a conversation.
#include "python_literal.hpp"

#include <boost/json.hpp>
#include <cctype>
#include <charconv>

#include "utf8.hpp"

namespace shardkit::text {
namespace {

constexpr int kMaxDepth = 100;

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::optional<boost::json::value> document(std::string& problem) {
    auto value = parse(0);
    if (value) {
      skip_space();
      if (at_ < s_.size()) value = fail("unexpected text after the value");
    }
    if (!value) problem = "character " + std::to_string(at_ + 1) + ": " + problem_;
    return value;
  }

 private:
  std::nullopt_t fail(std::string why) {
    if (problem_.empty()) problem_ = std::move(why);
    return std::nullopt;
  }

  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }

  bool take(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  std::optional<boost::json::value> parse(int depth) {
    if (depth > kMaxDepth) return fail("nested more than 100 deep");
    skip_space();
    if (at_ >= s_.size()) return fail("the text ends where a value should start");
    const char c = s_[at_];
    if (c == '[') return sequence(']', depth);
    if (c == '(') return sequence(')', depth);
    if (c == '{') return dict(depth);
    if (c == '\'' || c == '"' || string_prefix()) return strings();
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) return number();
    for (const auto& [word, value] : {std::pair<std::string_view, boost::json::value>{"True", true},
                                      {"False", false}, {"None", nullptr}})
      if (s_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    return fail(std::string("'") + c + "' does not start a Python literal");
  }

  std::optional<boost::json::value> sequence(char close, int depth) {
    ++at_;
    boost::json::array items;
    while (!take(close)) {
      auto item = parse(depth + 1);
      if (!item) return std::nullopt;
      items.push_back(std::move(*item));
      if (!take(',') && !(skip_space(), at_ < s_.size() && s_[at_] == close))
        return fail(std::string("expected ',' or '") + close + "'");
    }
    return boost::json::value(std::move(items));
  }

  std::optional<boost::json::value> dict(int depth) {
    ++at_;
    boost::json::object items;
    while (!take('}')) {
      auto key = parse(depth + 1);
      if (!key) return std::nullopt;
      if (!key->is_string()) return fail("a dict key that is not a string");
      if (!take(':')) return fail("expected ':' after a dict key");
      auto value = parse(depth + 1);
      if (!value) return std::nullopt;
      items[key->as_string()] = std::move(*value);
      if (!take(',') && !(skip_space(), at_ < s_.size() && s_[at_] == '}')) return fail("expected ',' or '}'");
    }
    return boost::json::value(std::move(items));
  }

  std::optional<boost::json::value> number() {
    const auto begin = at_;
    if (s_[at_] == '+' || s_[at_] == '-') ++at_;
    bool is_float = false;
    while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '.' || s_[at_] == '_' ||
                               ((s_[at_] == '-' || s_[at_] == '+') && (s_[at_ - 1] == 'e' || s_[at_ - 1] == 'E')))) {
      if (s_[at_] == '.' || s_[at_] == 'e' || s_[at_] == 'E') is_float = true;
      ++at_;
    }
    std::string digits;
    for (auto i = begin; i < at_; ++i)
      if (s_[i] != '_' && s_[i] != '+') digits += s_[i];
    const char* first = digits.data();
    const char* last = first + digits.size();
    if (!is_float) {
      std::int64_t v = 0;
      if (auto r = std::from_chars(first, last, v); r.ec == std::errc() && r.ptr == last) return boost::json::value(v);
    }
    double d = 0;
    if (auto r = std::from_chars(first, last, d); r.ec == std::errc() && r.ptr == last) return boost::json::value(d);
    return fail("'" + std::string(s_.substr(begin, at_ - begin)) + "' is not a number");
  }

  // The length of a string prefix at at_ (u, r, U, R) followed by a quote; 0 when none.
  std::size_t string_prefix() const {
    if (at_ + 1 < s_.size() && std::string_view("uUrR").find(s_[at_]) != std::string_view::npos &&
        (s_[at_ + 1] == '\'' || s_[at_ + 1] == '"'))
      return 1;
    return 0;
  }

  // One or more adjacent string literals, joined as Python joins them.
  std::optional<boost::json::value> strings() {
    std::string out;
    do {
      const bool raw = string_prefix() && (s_[at_] == 'r' || s_[at_] == 'R');
      at_ += string_prefix();
      if (!string_literal(out, raw)) return std::nullopt;
      skip_space();
    } while (at_ < s_.size() && (s_[at_] == '\'' || s_[at_] == '"' || string_prefix()));
    return boost::json::value(out);
  }

  bool hex_escape(int digits, std::string& out) {
    if (at_ + static_cast<std::size_t>(digits) > s_.size()) return fail("a truncated \\x, \\u or \\U escape"), false;
    std::uint32_t cp = 0;
    const auto r = std::from_chars(s_.data() + at_, s_.data() + at_ + digits, cp, 16);
    if (r.ec != std::errc() || r.ptr != s_.data() + at_ + digits || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
      return fail("a bad \\x, \\u or \\U escape"), false;
    at_ += static_cast<std::size_t>(digits);
    append_utf8(cp, out);
    return true;
  }

  // A quoted string at at_; `raw` (an r prefix) keeps backslashes as they are.
  bool string_literal(std::string& out, bool raw) {
    const char quote = s_[at_];
    const bool triple = s_.substr(at_, 3) == std::string(3, quote);
    at_ += triple ? 3 : 1;
    for (;;) {
      if (at_ >= s_.size()) return fail("a string is never closed"), false;
      const char c = s_[at_];
      if (c == quote && (!triple || s_.substr(at_, 3) == std::string(3, quote))) {
        at_ += triple ? 3 : 1;
        return true;
      }
      if (c == '\n' && !triple) return fail("a line break inside a one-line string"), false;
      ++at_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) return fail("a string ends with a backslash"), false;
      if (raw) {  // r'...': the backslash stays, and the character after it is taken as it is
        out += c;
        out += s_[at_++];
        continue;
      }
      const char e = s_[at_++];
      if (e >= '0' && e <= '7') {  // an octal escape: up to three digits
        std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
        for (int k = 0; k < 2 && at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '7'; ++k)
          cp = cp * 8 + static_cast<std::uint32_t>(s_[at_++] - '0');
        append_utf8(cp, out);
        continue;
      }
      if (e == '\r' && at_ < s_.size() && s_[at_] == '\n') {  // a line continuation written with CRLF
        ++at_;
        continue;
      }
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\\': case '\'': case '"': out += e; break;
        case '\n': break;  // a line continuation
        case 'x': if (!hex_escape(2, out)) return false; break;
        case 'u': if (!hex_escape(4, out)) return false; break;
        case 'U': if (!hex_escape(8, out)) return false; break;
        default: out += '\\'; out += e;  // Python keeps unknown escapes as they are
      }
    }
  }

  std::string_view s_;
  std::size_t at_ = 0;
  std::string problem_;
};

}  // namespace

std::optional<boost::json::value> parse_python_literal(std::string_view text, std::string& problem) {
  return Reader(text).document(problem);
}

}  // namespace shardkit::text
