// Loads a TOML, JSON or YAML configuration file into dotted keys (nested tables become "a.b").
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

std::string position(const std::string& path, const toml::source_region& where) {
  return path + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
}

// Walks a TOML table; every problem is collected so the user sees them all at once.
void flatten_toml(const toml::table& table, const std::string& prefix, const std::string& path,
                  RawConfig& out, std::vector<std::string>& errors) {
  for (const auto& [k, node] : table) {
    const std::string key = prefix + std::string(k.str());
    const std::string origin = position(path, node.source());
    // A quoted dotted key ("a.b" = 1) and a table ([a] b = 2) can name the same key.
    if (out.count(key) != 0) {
      errors.push_back(origin + ": key '" + key + "' is given twice (also at " +
                       out.at(key).origin + ")");
      continue;
    }
    if (const auto* sub = node.as_table()) {
      flatten_toml(*sub, key + ".", path, out, errors);
    } else if (const auto* array = node.as_array()) {
      std::vector<std::string> items;
      bool strings_only = true;
      for (const auto& item : *array) {
        if (const auto* s = item.as_string()) {
          items.push_back(s->get());
        } else {
          strings_only = false;
        }
      }
      if (strings_only) {
        out[key] = RawValue{Value{join_list(items, ",")}, origin};
      } else {
        errors.push_back(origin + ": key '" + key + "': arrays may only hold strings");
      }
    } else if (const auto* s = node.as_string()) {
      out[key] = RawValue{Value{s->get()}, origin};
    } else if (const auto* i = node.as_integer()) {
      out[key] = RawValue{Value{i->get()}, origin};
    } else if (const auto* d = node.as_floating_point()) {
      out[key] = RawValue{Value{d->get()}, origin};
    } else if (const auto* b = node.as_boolean()) {
      out[key] = RawValue{Value{b->get()}, origin};
    } else {
      errors.push_back(origin + ": key '" + key +
                       "': dates and times are not supported; write the value as a string");
    }
  }
}

RawConfig load_toml(const std::string& path, const std::string& text) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(position(path, e.source()) + ": TOML syntax error: " +
                      std::string(e.description()));
  }
  RawConfig out;
  std::vector<std::string> errors;
  flatten_toml(table, "", path, out, errors);
  config_detail::throw_if_any(errors);
  return out;
}

std::string lower_extension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

}  // namespace

void config_detail::throw_if_any(const std::vector<std::string>& errors) {
  if (errors.empty()) return;
  std::string message;
  for (const auto& e : errors) message += (message.empty() ? "" : "\n") + e;
  throw ConfigError(message);
}

RawConfig load_config_file(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext != ".toml" && ext != ".json" && ext != ".yaml" && ext != ".yml") {
    throw ConfigError("config file '" + path + "': unsupported extension '" + ext +
                      "'; use a .toml, .json or .yaml file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError("config file '" + path + "' cannot be opened; check --config_path");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (ext == ".toml") return load_toml(path, text);
  if (ext == ".yaml" || ext == ".yml") return config_detail::parse_yaml_document(text, path);
  return config_detail::parse_json_document(text, path);
}

}  // namespace shardkit
