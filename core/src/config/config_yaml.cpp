// Loads a YAML configuration file (AITraining's format) into dotted keys, as TOML and JSON files are.
#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"

namespace shardkit::config_detail {
namespace {

std::string position(const std::string& path, const YAML::Mark& mark) {
  // yaml-cpp counts from 0; editors and the TOML/JSON errors count from 1.
  return path + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

/// Whether `text` is digits after an optional sign (at least one digit from `from`).
bool digits_only(const std::string& text, std::size_t from) {
  return from < text.size() && text.find_first_not_of("0123456789", from) == std::string::npos;
}

/// Whether `text` is a YAML 1.2 core-schema float: [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)? (checked by
/// hand: std::regex recurses per character and overflows the stack on long scalars).
bool is_float(const std::string& text) {
  std::size_t i = text.empty() || (text[0] != '-' && text[0] != '+') ? 0 : 1;
  const auto digits = [&] {
    const auto start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  const bool whole = digits();
  bool fraction = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (!whole && !fraction) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

/// A plain (unquoted) scalar typed by YAML 1.2's core schema; a quoted one is always a string.
/// A number out of range stays text: the option's own conversion reports the range.
Value typed_scalar(const YAML::Node& node) {
  const auto& text = node.Scalar();
  if (node.Tag() == "!") return Value{text};
  if (text == "true" || text == "True" || text == "TRUE") return Value{true};
  if (text == "false" || text == "False" || text == "FALSE") return Value{false};
  try {
    if (digits_only(text, text.empty() || (text[0] != '-' && text[0] != '+') ? 0 : 1))
      return Value{static_cast<std::int64_t>(std::stoll(text))};
    if (is_float(text)) return Value{std::stod(text)};
  } catch (const std::out_of_range&) {
  }
  return Value{text};
}

constexpr int kMaxDepth = 32;

[[noreturn]] void throw_too_large(const std::string& path) {
  throw ConfigError(path + ": the document expands to more values than it has characters (aliases of aliases?); "
                    "a configuration lists each option once");
}

bool is_null(const YAML::Node& node) {
  return node.IsNull() || (node.IsScalar() && node.Tag() != "!" &&
                           (node.Scalar() == "~" || node.Scalar() == "null" || node.Scalar() == "Null"));
}

// Walks a mapping; every problem is collected so the user sees them all at once. `budget`: the
// values (keys and list items) still allowed, so that aliases of aliases (a "billion laughs")
// cannot make a small file expand without end.
void flatten(const YAML::Node& map, const std::string& prefix, const std::string& path, RawConfig& out,
             std::vector<std::string>& errors, std::size_t& budget, int depth = 0) {
  // An option name has a few dotted parts; a mapping that holds itself (through an alias) has no end.
  if (depth > kMaxDepth)
    throw ConfigError(position(path, map.Mark()) + ": mappings nested more than " + std::to_string(kMaxDepth) +
                      " deep (a mapping that holds itself through an alias?)");
  for (const auto& item : map) {
    if (budget == 0) throw_too_large(path);
    --budget;
    const auto& k = item.first;
    const auto& v = item.second;
    const auto origin = position(path, k.Mark());
    if (!k.IsScalar()) {
      errors.push_back(origin + ": keys must be plain names");
      continue;
    }
    const auto key = prefix + k.Scalar();
    if (out.count(key)) {
      errors.push_back(origin + ": key '" + key + "' is given twice (also at " + out.at(key).origin + ")");
      continue;
    }
    if (v.IsMap()) {
      flatten(v, key + ".", path, out, errors, budget, depth + 1);
    } else if (v.IsSequence()) {
      std::vector<std::string> items;
      bool scalars = true;
      for (const auto& e : v) {
        if (budget == 0) throw_too_large(path);
        --budget;
        if (e.IsScalar()) items.push_back(e.Scalar());
        else scalars = false;
      }
      if (scalars) out[key] = RawValue{Value{join_list(items, ",")}, position(path, v.Mark())};
      else errors.push_back(position(path, v.Mark()) + ": key '" + key + "': lists may only hold plain values");
    } else if (is_null(v)) {
      errors.push_back(position(path, v.Mark()) + ": key '" + key +
                       "' has no value (null); remove the key to use its default");
    } else {
      out[key] = RawValue{typed_scalar(v), position(path, v.Mark())};
    }
  }
}

}  // namespace

RawConfig parse_yaml_document(const std::string& text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {  // syntax errors, and nesting too deep to follow
    throw ConfigError(position(path, e.mark) + ": YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) return {};
  if (!root.IsMap())
    throw ConfigError(path + ": a YAML configuration is a mapping of option names to values (`steps: 100`)");
  RawConfig out;
  std::vector<std::string> errors;
  // Each key or list item takes at least a character of the text unless an alias repeats it.
  std::size_t budget = text.size() + 64;
  flatten(root, "", path, out, errors, budget);
  throw_if_any(errors);
  return out;
}

}  // namespace shardkit::config_detail
