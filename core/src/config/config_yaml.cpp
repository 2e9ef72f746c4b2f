// Loads a YAML configuration file (AITraining's format) into dotted keys, as TOML and JSON files are.
#include <yaml-cpp/yaml.h>

#include <regex>
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

/// A plain (unquoted) scalar typed by YAML 1.2's core schema; a quoted one is always a string.
Value typed_scalar(const YAML::Node& node) {
  const auto& text = node.Scalar();
  if (node.Tag() == "!") return Value{text};
  static const std::regex kInt(R"([-+]?[0-9]+)");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  if (text == "true" || text == "True" || text == "TRUE") return Value{true};
  if (text == "false" || text == "False" || text == "FALSE") return Value{false};
  if (std::regex_match(text, kInt)) {
    try {
      return Value{static_cast<std::int64_t>(std::stoll(text))};
    } catch (const std::out_of_range&) {
      return Value{text};  // the option's own conversion reports the range
    }
  }
  if (std::regex_match(text, kFloat)) return Value{std::stod(text)};
  return Value{text};
}

bool is_null(const YAML::Node& node) {
  return node.IsNull() || (node.IsScalar() && node.Tag() != "!" &&
                           (node.Scalar() == "~" || node.Scalar() == "null" || node.Scalar() == "Null"));
}

// Walks a mapping; every problem is collected so the user sees them all at once.
void flatten(const YAML::Node& map, const std::string& prefix, const std::string& path, RawConfig& out,
             std::vector<std::string>& errors) {
  for (const auto& item : map) {
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
      flatten(v, key + ".", path, out, errors);
    } else if (v.IsSequence()) {
      std::vector<std::string> items;
      bool scalars = true;
      for (const auto& e : v) {
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
  } catch (const YAML::ParserException& e) {
    throw ConfigError(position(path, e.mark) + ": YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) return {};
  if (!root.IsMap())
    throw ConfigError(path + ": a YAML configuration is a mapping of option names to values (`steps: 100`)");
  RawConfig out;
  std::vector<std::string> errors;
  flatten(root, "", path, out, errors);
  throw_if_any(errors);
  return out;
}

}  // namespace shardkit::config_detail
