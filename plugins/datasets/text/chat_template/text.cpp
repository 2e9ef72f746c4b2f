// Text as Python's str sees it (see text.hpp).
#include "chat_template/text.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <utility>

#include "chat_template/errors.hpp"
#include "utf8.hpp"

namespace shardkit::chat {

// EvalError's one out-of-line member (its vtable's home): the renderer's lowest layer, where it is first thrown.
EvalError::~EvalError() = default;

std::u32string decode_utf8(std::string_view s) {
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    if (n < 0 || s.size() - i <= static_cast<std::size_t>(n))
      throw EvalError("malformed UTF-8 at byte " + std::to_string(i) + " of a string");
    char32_t c = n == 0 ? b : (b & (0x3Fu >> n));
    for (int k = 1; k <= n; ++k) {
      const auto cb = static_cast<unsigned char>(s[i + k]);
      if ((cb & 0xC0) != 0x80) throw EvalError("malformed UTF-8 at byte " + std::to_string(i) + " of a string");
      c = (c << 6) | (cb & 0x3F);
    }
    if (c < kMin[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      throw EvalError("malformed UTF-8 at byte " + std::to_string(i) + " of a string");
    out.push_back(c);
    i += n + 1;
  }
  return out;
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char32_t c : s) text::append_utf8(c, out);
  return out;
}

std::size_t code_point_count(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, const std::string* chars, bool left, bool right) {
  const auto cps = decode_utf8(s);
  const std::u32string set = chars ? decode_utf8(*chars) : std::u32string();
  const auto drop = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  std::size_t b = 0, e = cps.size();
  while (left && b < e && drop(cps[b])) ++b;
  while (right && e > b && drop(cps[e - 1])) --e;
  return encode_utf8(std::u32string_view(cps).substr(b, e - b));
}

namespace {

std::vector<std::string> split_on(std::string_view s, const std::string& sep, std::int64_t maxsplit, bool from_right) {
  if (sep.empty()) throw EvalError("empty separator");
  std::vector<std::string> out;
  const auto room = [&] { return maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit; };
  if (!from_right) {
    std::size_t at = 0;
    for (std::size_t hit; room() && (hit = s.find(sep, at)) != std::string_view::npos; at = hit + sep.size())
      out.emplace_back(s.substr(at, hit - at));
    out.emplace_back(s.substr(at));
    return out;
  }
  std::size_t end = s.size();
  for (std::size_t hit; room() && end >= sep.size() && (hit = s.rfind(sep, end - sep.size())) != std::string_view::npos;
       end = hit)
    out.emplace_back(s.substr(hit + sep.size(), end - hit - sep.size()));
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> split_on_space(std::string_view s, std::int64_t maxsplit, bool from_right) {
  std::u32string cps = decode_utf8(s);
  if (from_right) std::reverse(cps.begin(), cps.end());
  std::vector<std::u32string> parts;
  for (std::size_t i = 0, n = cps.size();;) {
    while (i < n && is_space(cps[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(parts.size()) == maxsplit) {
      parts.push_back(cps.substr(i));
      break;
    }
    std::size_t j = i;
    while (j < n && !is_space(cps[j])) ++j;
    parts.push_back(cps.substr(i, j - i));
    i = j;
  }
  std::vector<std::string> out;
  for (auto& p : parts) {
    if (from_right) std::reverse(p.begin(), p.end());
    out.push_back(encode_utf8(p));
  }
  if (from_right) std::reverse(out.begin(), out.end());
  return out;
}

// Letters of scripts with case outside ASCII (Latin-1 and Extended, Greek, Cyrillic, Armenian,
// Georgian, Cherokee, letterlike and circled forms, fullwidth Latin, Deseret...).
bool cased_beyond_ascii(char32_t c) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0xB5, 0xB5},         {0xC0, 0x58F},        {0x10A0, 0x10FF},     {0x13A0, 0x13FF},   {0x1C80, 0x1CBF},
      {0x1D00, 0x1FFF},     {0x2100, 0x218F},     {0x24B6, 0x24E9},     {0x2C00, 0x2D2F},   {0xA640, 0xA7FF},
      {0xAB30, 0xABBF},     {0xFB00, 0xFB17},     {0xFF21, 0xFF5A},     {0x10400, 0x104FF}, {0x10C80, 0x10CFF},
      {0x118A0, 0x118FF},   {0x16E40, 0x16E9F},   {0x1E900, 0x1E95F}};
  return std::any_of(std::begin(kRanges), std::end(kRanges),
                     [c](const auto& r) { return c >= r.first && c <= r.second; });
}

}  // namespace

std::vector<std::string> split(std::string_view s, const std::string* sep, std::int64_t maxsplit, bool from_right) {
  return sep ? split_on(s, *sep, maxsplit, from_right) : split_on_space(s, maxsplit, from_right);
}

std::string replace(std::string_view s, std::string_view from, std::string_view to, std::int64_t count) {
  std::string out;
  const auto take = [&count] { return count < 0 || (count > 0 && count-- > 0); };
  if (from.empty()) {  // Python puts `to` before every code point and at the end
    for (const char32_t c : decode_utf8(s)) {
      if (take()) out += to;
      text::append_utf8(c, out);
    }
    if (take()) out += to;
    return out;
  }
  std::size_t at = 0;
  for (std::size_t hit; (hit = s.find(from, at)) != std::string_view::npos && take(); at = hit + from.size())
    out.append(s.substr(at, hit - at)).append(to);
  return out.append(s.substr(at));
}

std::string change_case(std::string_view s, Case c) {
  std::string out;
  out.reserve(s.size());
  bool word_start = true;
  std::size_t index = 0;
  for (char32_t ch : decode_utf8(s)) {
    if (ch >= 0x80 && cased_beyond_ascii(ch)) {
      std::string letter;
      text::append_utf8(ch, letter);
      throw EvalError("changing the case of '" + letter +
                      "' (a letter outside ASCII) is not supported by shardkit's chat template renderer");
    }
    const bool letter = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    bool upper = false;
    switch (c) {
      case Case::Upper: upper = true; break;
      case Case::Lower: upper = false; break;
      case Case::Capitalize: upper = index == 0; break;
      case Case::PythonTitle: upper = word_start; word_start = !letter; break;
      case Case::JinjaTitle:
        upper = word_start;
        word_start = is_space(ch) || ch == '-' || ch == '(' || ch == '{' || ch == '[' || ch == '<';
        break;
    }
    if (letter) ch = upper ? (ch & ~0x20u) : (ch | 0x20u);
    text::append_utf8(ch, out);
    ++index;
  }
  return out;
}

namespace {

bool printable(char32_t c) {
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x80) return true;
  static constexpr std::pair<char32_t, char32_t> kUnprintable[] = {
      {0x80, 0xA0},     {0xAD, 0xAD},     {0x600, 0x605},   {0x61C, 0x61C},   {0x6DD, 0x6DD},
      {0x70F, 0x70F},   {0x1680, 0x1680}, {0x180E, 0x180E}, {0x2000, 0x200F}, {0x2028, 0x202F},
      {0x205F, 0x2064}, {0x2066, 0x206F}, {0x3000, 0x3000}, {0xD800, 0xF8FF}, {0xFEFF, 0xFEFF},
      {0xFFF9, 0xFFFB}, {0xFFFE, 0xFFFF}, {0xE0000, 0xE0FFF}, {0xF0000, 0x10FFFF}};
  return std::none_of(std::begin(kUnprintable), std::end(kUnprintable),
                      [c](const auto& r) { return c >= r.first && c <= r.second; });
}

}  // namespace

std::string repr_string(std::string_view s) {
  const char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out(1, quote);
  for (const char32_t c : decode_utf8(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (!printable(c)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, c < 0x100 ? "\\x%02x" : c < 0x10000 ? "\\u%04x" : "\\U%08x",
                    static_cast<unsigned>(c));
      out += buf;
    } else {
      text::append_utf8(c, out);
    }
  }
  out += quote;
  return out;
}

}  // namespace shardkit::chat
