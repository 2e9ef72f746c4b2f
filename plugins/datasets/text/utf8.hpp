// UTF-8 encoding of one code point: shared by the tokenizer, the chat-template renderer and the
// Python-literal reader.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit::text {

/// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF) to `out`.
inline void append_utf8(std::uint32_t code_point, std::string& out) {
  const auto cp = code_point;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace shardkit::text
