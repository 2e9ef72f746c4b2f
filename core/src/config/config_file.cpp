// Loads a TOML, JSON or YAML configuration file into dotted keys (nested tables become "a.b").
#include <toml++/toml.h>

#include <algorithm>
#include <cstring>
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

std::string lower_extension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// Where `text` has a byte above 0x7F outside a string or a comment (npos when nowhere). TOML
// allows non-ASCII characters only there, and toml++ 3.3 (Debian 12's) reaches undefined
// behaviour ("unreachable") classifying some of them elsewhere: such documents are refused first.
// Conservatively, a quote opens a string only where TOML allows one (a key's start, after '=',
// '[', ',', '{' or '.') and only when the string is closed; any other quote is plain text.
std::size_t non_ascii_outside_strings(const std::string& text) {
  std::size_t i = 0;
  char previous = '\n';  // the last character before `i` that is not a space or a tab
  const auto at = [&](std::size_t from, const char* token) {
    return text.compare(from, std::strlen(token), token) == 0;
  };
  // Where the string opening at `i` ends (just past its closing quote), or npos when it does not.
  const auto string_end = [&]() -> std::size_t {
    const bool multi = at(i, "\"\"\"") || at(i, "'''");
    const std::string close = multi ? text.substr(i, 3) : text.substr(i, 1);
    const bool escapes = close[0] == '"';
    for (std::size_t j = i + close.size(); j < text.size(); j += (escapes && text[j] == '\\') ? 2 : 1) {
      if (at(j, close.c_str())) return j + close.size();
      if (!multi && text[j] == '\n') return std::string::npos;
    }
    return std::string::npos;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if ((c == '"' || c == '\'') && std::strchr("\n=[,{.", previous) != nullptr) {
      if (const auto end = string_end(); end != std::string::npos) {
        i = end;
        previous = c;
        continue;
      }
    }
    if (static_cast<unsigned char>(c) > 0x7F) return i;
    if (c != ' ' && c != '\t') previous = c;
    ++i;
  }
  return std::string::npos;
}

}  // namespace

RawConfig config_detail::parse_toml_document(const std::string& text, const std::string& path) {
  const auto parse = [&](const std::string& document) {
    try {
      return toml::parse(document, path);
    } catch (const toml::parse_error& e) {
      throw ConfigError(position(path, e.source()) + ": TOML syntax error: " + std::string(e.description()));
    }
  };
  // toml++ 3.3 (Debian 12's) reaches undefined behaviour ("unreachable") classifying some
  // non-ASCII characters where it expects whitespace, which a syntax error anywhere before them
  // can lead it to: the document's syntax is checked first with every such byte replaced by an
  // ASCII letter (positions unchanged), and then only where strings and comments lie.
  std::string ascii = text;
  for (auto& c : ascii)
    if (static_cast<unsigned char>(c) > 0x7F) c = 'x';
  auto table = parse(ascii);
  if (ascii != text) {
    if (const auto bad = non_ascii_outside_strings(text); bad != std::string::npos) {
      const auto [line, column] = config_detail::line_column(text, bad);
      throw ConfigError(path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                        ": TOML syntax error: a character outside ASCII outside a string or a comment; quote the "
                        "value or the key");
    }
    table = parse(text);
  }
  RawConfig out;
  std::vector<std::string> errors;
  flatten_toml(table, "", path, out, errors);
  config_detail::throw_if_any(errors);
  return out;
}

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
  if (ext == ".toml") return config_detail::parse_toml_document(text, path);
  if (ext == ".yaml" || ext == ".yml") return config_detail::parse_yaml_document(text, path);
  return config_detail::parse_json_document(text, path);
}

}  // namespace shardkit
