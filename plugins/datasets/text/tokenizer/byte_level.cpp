// The byte-level alphabet and the UTF-8 helpers the tokenizer needs.
#include "byte_level.hpp"

#include <array>

namespace shardkit::text {
namespace {

// GPT-2's table: printable Latin-1 bytes stand for themselves, the other 68 bytes take the
// code points 256, 257, ... in byte order.
struct Table {
  std::array<std::uint32_t, 256> code_point{};
  std::array<std::string, 256> utf8;
  std::array<int, 512> byte{};
  Table() {
    byte.fill(-1);
    std::uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      code_point[b] = printable ? static_cast<std::uint32_t>(b) : next++;
      append_utf8(code_point[b], utf8[b]);
      byte[code_point[b]] = b;
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

void append_byte_level(std::string_view bytes, std::string& out) {
  const auto& t = table();
  for (const char c : bytes) out += t.utf8[static_cast<unsigned char>(c)];
}

int byte_of_code_point(std::uint32_t code_point) {
  return code_point < 512 ? table().byte[code_point] : -1;
}

namespace {
// Length of the valid UTF-8 sequence at `at` (1..4), or 0 when it is invalid.
std::size_t valid_sequence(std::string_view s, std::size_t at) {
  const auto b = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  const unsigned c = b(at);
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(at + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned c1 = b(at + 1);
    if (!cont(at + 1) || !cont(at + 2)) return 0;
    if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c == 0xED && c1 >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned c1 = b(at + 1);
    if (!cont(at + 1) || !cont(at + 2) || !cont(at + 3)) return 0;
    if (c == 0xF0 && c1 < 0x90) return 0;
    if (c == 0xF4 && c1 >= 0x90) return 0;
    return 4;
  }
  return 0;
}
}  // namespace

std::uint32_t next_code_point(std::string_view s, std::size_t& at) {
  const auto n = valid_sequence(s, at);
  const auto c = static_cast<unsigned char>(s[at]);
  std::uint32_t cp;
  switch (n) {
    case 1: cp = c; break;
    case 2: cp = ((c & 0x1Fu) << 6) | (s[at + 1] & 0x3F); break;
    case 3: cp = ((c & 0x0Fu) << 12) | ((s[at + 1] & 0x3F) << 6) | (s[at + 2] & 0x3F); break;
    case 4:
      cp = ((c & 0x07u) << 18) | ((s[at + 1] & 0x3F) << 12) | ((s[at + 2] & 0x3F) << 6) | (s[at + 3] & 0x3F);
      break;
    default: ++at; return 0xFFFD;
  }
  at += n;
  return cp;
}

bool valid_utf8(std::string_view text, std::size_t& bad_at) {
  for (std::size_t at = 0; at < text.size();) {
    const auto n = valid_sequence(text, at);
    if (n == 0) {
      bad_at = at;
      return false;
    }
    at += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t at = 0; at < bytes.size();) {
    const auto n = valid_sequence(bytes, at);
    if (n) {
      out.append(bytes.substr(at, n));
      at += n;
      continue;
    }
    // One U+FFFD per maximal prefix of a valid sequence (the WHATWG / Rust rule).
    std::size_t skip = 1;
    const unsigned c = static_cast<unsigned char>(bytes[at]);
    const std::size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 1;
    while (skip < want && at + skip < bytes.size() &&
           (static_cast<unsigned char>(bytes[at + skip]) & 0xC0) == 0x80) {
      const unsigned c1 = static_cast<unsigned char>(bytes[at + 1]);
      if (skip == 1 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
                        (c == 0xF4 && c1 >= 0x90) || c > 0xF4))
        break;
      ++skip;
    }
    out += "\xEF\xBF\xBD";
    at += skip;
  }
  return out;
}

}  // namespace shardkit::text
