// Converts a flag's text or a file's typed value to an option's declared type and checks it.
//
// Rules: a string (a flag, or a quoted value in a file) is parsed as the option's type.
// A typed file value must match the type, except that an integer is accepted for a
// float option and written out exactly for a string option; a bool or a float is not
// silently turned into a string.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "config_internal.hpp"

namespace shardkit::config_detail {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<bool> parse_bool(const std::string& text) {
  const std::string t = lower(text);
  if (t == "true" || t == "1" || t == "yes") return true;
  if (t == "false" || t == "0" || t == "no") return false;
  return std::nullopt;
}

// The whole text must be the number: from_chars stops at the first unexpected character.
std::optional<std::int64_t> parse_int(const std::string& text, bool& overflow) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  std::int64_t value = 0;
  const auto result = std::from_chars(begin, end, value, 10);
  if (begin == end || result.ptr != end) return std::nullopt;
  if (result.ec == std::errc::result_out_of_range) {
    overflow = true;
    return std::nullopt;
  }
  if (result.ec != std::errc()) return std::nullopt;
  return value;
}

std::optional<double> parse_float(const std::string& text) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  double value = 0;
  const auto result = std::from_chars(begin, end, value, std::chars_format::general);
  // from_chars also reads "inf" and "nan": a configuration wants a finite number.
  if (begin == end || result.ptr != end || result.ec != std::errc() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<Value> convert_type(OptionType type, const Value& raw, std::string& problem) {
  const std::string* text = std::get_if<std::string>(&raw);
  switch (type) {
    case OptionType::Bool:
      if (const bool* b = std::get_if<bool>(&raw)) return Value{*b};
      if (text) {
        if (auto b = parse_bool(*text)) return Value{*b};
      }
      problem = "expected true or false (also accepted: 1/0, yes/no)";
      return std::nullopt;
    case OptionType::Int: {
      if (const auto* i = std::get_if<std::int64_t>(&raw)) return Value{*i};
      bool overflow = false;
      if (text) {
        if (auto i = parse_int(*text, overflow)) return Value{*i};
      }
      problem = overflow ? "expected an integer between -9223372036854775808 and 9223372036854775807"
                         : "expected an integer";
      return std::nullopt;
    }
    case OptionType::Float:
      if (const auto* d = std::get_if<double>(&raw)) {
        if (std::isfinite(*d)) return Value{*d};
      } else if (const auto* i = std::get_if<std::int64_t>(&raw)) {
        return Value{static_cast<double>(*i)};
      } else if (text) {
        if (auto d = parse_float(*text)) return Value{*d};
      }
      problem = "expected a finite number (e.g. 0.001 or 1e-3)";
      return std::nullopt;
    case OptionType::String:
      if (text) return Value{*text};
      if (const auto* i = std::get_if<std::int64_t>(&raw)) return Value{std::to_string(*i)};
      problem = "expected a string (quote the value in the config file)";
      return std::nullopt;
  }
  problem = "unknown option type";
  return std::nullopt;
}

}  // namespace

std::string format_bound(double bound) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), bound);
  return std::string(buffer, result.ptr);
}

std::optional<Value> convert_option(const SchemaEntry& entry, const Value& raw,
                                    std::string& problem) {
  auto value = convert_type(entry.type, raw, problem);
  if (!value) return std::nullopt;
  if (entry.type == OptionType::Int || entry.type == OptionType::Float) {
    const double number = entry.type == OptionType::Int
                              ? static_cast<double>(std::get<std::int64_t>(*value))
                              : std::get<double>(*value);
    if (entry.min && number < *entry.min) {
      problem = "must be >= " + format_bound(*entry.min);
      return std::nullopt;
    }
    if (entry.max && number > *entry.max) {
      problem = "must be <= " + format_bound(*entry.max);
      return std::nullopt;
    }
  }
  if (!entry.choices.empty()) {
    const std::string s = to_string(*value);
    if (std::find(entry.choices.begin(), entry.choices.end(), s) == entry.choices.end()) {
      problem = "must be one of: ";
      for (std::size_t i = 0; i < entry.choices.size(); ++i) {
        problem += (i ? ", " : "") + entry.choices[i];
      }
      return std::nullopt;
    }
  }
  return value;
}

}  // namespace shardkit::config_detail
