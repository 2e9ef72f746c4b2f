// Config <-> JSON: the train_config.json written in checkpoints, and reading it back exactly.
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "../safetensors/format_internal.hpp"
#include "config_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

// One level of the nested document: either a leaf value or named children.
struct Node {
  const Value* leaf = nullptr;
  std::map<std::string, std::unique_ptr<Node>> children;
};

// JSON text is UTF-8, and the safetensors header writer already escapes as serde_json does.
void write_string(std::string& out, const std::string& s, const std::string& key) {
  const std::size_t bad = safetensors::detail::invalid_utf8_offset(s.data(), s.size());
  if (bad != s.size()) {
    throw ConfigError("config key '" + key + "' holds a string that is not valid UTF-8 (byte " +
                      std::to_string(bad) + "); JSON cannot store it");
  }
  safetensors::detail::append_json_string(&out, s);
}

void write_node(std::string& out, const Node& node, const std::string& path, int depth) {
  if (node.leaf != nullptr) {
    const Value& v = *node.leaf;
    if (const auto* s = std::get_if<std::string>(&v)) {
      write_string(out, *s, path);
    } else {
      if (const auto* d = std::get_if<double>(&v); d && !std::isfinite(*d)) {
        throw ConfigError("config key '" + path + "' is " + to_string(v) +
                          ", which JSON cannot store; use a finite value");
      }
      out += to_string(v);
    }
    return;
  }
  if (node.children.empty()) {
    out += "{}";
    return;
  }
  const std::string indent(2 * static_cast<std::size_t>(depth + 1), ' ');
  out += "{\n";
  bool first = true;
  for (const auto& [name, child] : node.children) {
    if (!first) out += ",\n";
    first = false;
    out += indent;
    write_string(out, name, path);
    out += ": ";
    write_node(out, *child, path.empty() ? name : path + "." + name, depth + 1);
  }
  out += "\n" + std::string(2 * static_cast<std::size_t>(depth), ' ') + "}";
}

}  // namespace

std::string Config::to_json() const {
  Node root;
  for (const auto& [key, value] : values_) {
    Node* node = &root;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = key.find('.', start);
      const std::string part =
          key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty()) {
        throw ConfigError("config key '" + key + "' has an empty part and cannot be written as JSON");
      }
      if (node->leaf != nullptr) {
        throw ConfigError("config key '" + key.substr(0, start - 1) + "' is both a value and a " +
                          "group (as in '" + key + "'); JSON cannot hold both");
      }
      auto& child = node->children[part];
      if (!child) child = std::make_unique<Node>();
      node = child.get();
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (!node->children.empty()) {
      throw ConfigError("config key '" + key + "' is both a value and a group (as in '" +
                        key + "." + node->children.begin()->first +
                        "...'); JSON cannot hold both");
    }
    node->leaf = &value;
  }
  std::string out;
  write_node(out, root, "", 0);
  out += "\n";
  return out;
}

RawConfig Config::from_json_text(const std::string& text, const std::string& origin) {
  return config_detail::parse_json_document(text, origin);
}

}  // namespace shardkit
