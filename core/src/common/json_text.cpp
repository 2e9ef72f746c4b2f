// Exact JSON numbers and escaped JSON strings, for files core and plugins write by hand.
#include "shardkit/json_text.hpp"

#include <charconv>
#include <cmath>

namespace shardkit {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string json_escape(const std::string& text) {
  std::string escaped;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') escaped += '\\', escaped += static_cast<char>(c);
    else if (c == '\n') escaped += "\\n";
    else if (c < 0x20) escaped += ' ';
    else escaped += static_cast<char>(c);
  }
  return escaped;
}

}  // namespace shardkit
