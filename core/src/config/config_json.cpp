// Config <-> JSON: the train_config.json written in checkpoints, and reading it back exactly.
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "config_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

// One level of the nested document: either a leaf value or named children.
struct Node {
  const Value* leaf = nullptr;
  std::map<std::string, std::unique_ptr<Node>> children;
};

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

void write_string(std::string& out, const std::string& s, const std::string& key) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      const std::size_t n = utf8_length(s, i);
      if (n == 0) {
        throw ConfigError("config key '" + key + "' holds a string that is not valid UTF-8 (byte " +
                          std::to_string(i) + "); JSON cannot store it");
      }
      out.append(s, i, n);
      i += n;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xF];
        } else {
          out += c;
        }
    }
    ++i;
  }
  out += '"';
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
