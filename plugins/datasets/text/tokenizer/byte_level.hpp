// The byte-level alphabet of GPT-2: each of the 256 byte values shown as one printable character.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "utf8.hpp"  // append_utf8

namespace shardkit::text {

/// Appends the byte-level form of `bytes` (each byte as its UTF-8 encoded stand-in) to `out`.
void append_byte_level(std::string_view bytes, std::string& out);

/// The byte that the stand-in character `code_point` represents, or -1 when it is none.
int byte_of_code_point(std::uint32_t code_point);

/// Decodes one UTF-8 character at `text[at]`: returns its code point and advances `at`.
/// Invalid sequences yield U+FFFD and advance by one byte.
std::uint32_t next_code_point(std::string_view text, std::size_t& at);

/// Whether `c` has the Unicode White_Space property (Rust's char::is_whitespace).
inline bool is_white_space(std::uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// Whether `text` is valid UTF-8; when not, `bad_at` is the offset of the first bad byte.
bool valid_utf8(std::string_view text, std::size_t& bad_at);

/// `bytes` as UTF-8 with each invalid sequence replaced by U+FFFD (as Rust's from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

}  // namespace shardkit::text
