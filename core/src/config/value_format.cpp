// Writes typed configuration values as text: the form a flag takes and the form to_json() writes.
#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>

#include "shardkit/config.hpp"

namespace shardkit {
namespace {

// Shortest text that reads back to the same double (std::to_chars guarantees this),
// with ".0" added to integral values so that a JSON reader sees a float, not an int.
std::string format_double(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, result.ptr);
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos) {
    text += ".0";
  }
  return text;
}

}  // namespace

std::string to_string(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_double(v);
        } else {
          return v;
        }
      },
      value);
}

}  // namespace shardkit
