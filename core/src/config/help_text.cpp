// Formats a schema's options for --help, grouped by the plugin (or core) that declares them.
#include <algorithm>
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/config.hpp"

namespace shardkit {
namespace {

const char* type_name(OptionType type) {
  switch (type) {
    case OptionType::Bool: return "bool";
    case OptionType::Int: return "int";
    case OptionType::Float: return "float";
    case OptionType::String: return "string";
  }
  return "?";
}

std::string describe(const SchemaEntry& e) {
  std::string text = e.help;
  if (e.default_value.empty()) {
    text += e.type == OptionType::String ? " (default: \"\")" : " (no default)";
  } else {
    text += " (default: " + e.default_value + ")";
  }
  if (!e.choices.empty()) {
    text += " [allowed: ";
    for (std::size_t i = 0; i < e.choices.size(); ++i) text += (i ? "|" : "") + e.choices[i];
    text += "]";
  }
  if (e.min || e.max) {
    text += " [" + (e.min ? config_detail::format_bound(*e.min) : std::string()) + ".." +
            (e.max ? config_detail::format_bound(*e.max) : std::string()) + "]";
  }
  // Leading space only when there was no help text to follow.
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

}  // namespace

std::string Schema::help_text(const std::string& owner) const {
  // Owners in the order they were added; one aligned block each.
  std::vector<std::string> owners;
  for (const auto& e : entries_) {
    if (!owner.empty() && e.owner != owner) continue;
    if (std::find(owners.begin(), owners.end(), e.owner) == owners.end()) {
      owners.push_back(e.owner);
    }
  }
  std::string out;
  for (const auto& o : owners) {
    std::vector<std::pair<std::string, std::string>> lines;
    std::size_t width = 0;
    for (const auto& e : entries_) {
      if (e.owner != o) continue;
      std::string flag = "--" + e.key + "=<" + type_name(e.type) + ">";
      width = std::max(width, flag.size());
      lines.emplace_back(std::move(flag), describe(e));
    }
    if (!out.empty()) out += "\n";
    out += o + " options:\n";
    for (const auto& [flag, text] : lines) {
      out += "  " + flag + std::string(width - flag.size() + 2, ' ') + text + "\n";
    }
  }
  return out;
}

}  // namespace shardkit
