// Schema: the options a run accepts, built from core's and the plugins' OptionSpec arrays.
#include <charconv>
#include <cstdlib>
#include <string>

#include "config_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

std::optional<double> parse_bound(const char* text, const std::string& key,
                                  const std::string& owner, const char* which) {
  if (text == nullptr) return std::nullopt;
  const std::string s(text);
  double value = 0;
  const auto result = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || result.ec != std::errc() || result.ptr != s.data() + s.size()) {
    throw ConfigError("option --" + key + " declared by " + owner + " has a " + which +
                      " bound '" + s + "' that is not a number");
  }
  return value;
}

std::vector<std::string> split_choices(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string s(text);
  std::size_t start = 0;
  while (true) {
    const std::size_t bar = s.find('|', start);
    out.push_back(s.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

SchemaEntry make_entry(const std::string& prefix, const OptionSpec& spec,
                       const std::string& owner) {
  if (spec.name == nullptr || *spec.name == '\0') {
    throw ConfigError(owner + " declares an option without a name (prefix '" + prefix + "')");
  }
  SchemaEntry entry;
  entry.key = prefix + spec.name;
  entry.type = spec.type;
  entry.default_value = spec.default_value ? spec.default_value : "";
  entry.help = spec.help ? spec.help : "";
  entry.min = parse_bound(spec.min, entry.key, owner, "lower");
  entry.max = parse_bound(spec.max, entry.key, owner, "upper");
  entry.choices = split_choices(spec.choices);
  entry.owner = owner;
  // A bad default is the plugin author's bug: say so when the schema is built, not when
  // a user happens to rely on it. An empty default of a non-string option means "unset".
  if (!(entry.default_value.empty() && entry.type != OptionType::String) &&
      !(entry.default_value.empty() && !entry.choices.empty())) {
    std::string problem;
    if (!config_detail::convert_option(entry, Value{entry.default_value}, problem)) {
      throw ConfigError("option --" + entry.key + " declared by " + owner +
                        " has an invalid default '" + entry.default_value + "': " + problem);
    }
  }
  return entry;
}

}  // namespace

void Schema::add(const std::string& prefix, const OptionSpec* specs, std::size_t count,
                 const std::string& owner) {
  std::vector<SchemaEntry> added;
  for (std::size_t i = 0; i < count; ++i) {
    SchemaEntry entry = make_entry(prefix, specs[i], owner);
    const SchemaEntry* existing = find(entry.key);
    for (const auto& a : added) {
      if (a.key == entry.key) existing = &a;
    }
    if (existing != nullptr) {
      throw ConfigError("option --" + entry.key + " is declared twice: by " + existing->owner +
                        " and by " + owner + "; rename one of them");
    }
    added.push_back(std::move(entry));
  }
  // All or nothing: a failed add leaves the schema as it was.
  for (auto& entry : added) entries_.push_back(std::move(entry));
}

void Schema::add_inactive(const std::string& prefix, const OptionSpec* specs, std::size_t count,
                          const std::string& owner, const std::string& selector) {
  for (std::size_t i = 0; i < count; ++i) {
    if (specs[i].name == nullptr) continue;
    inactive_.push_back({prefix + specs[i].name, owner, selector});
  }
}

void Schema::allow_extra(const std::string& key) {
  for (const auto& k : extra_) {
    if (k == key) return;
  }
  extra_.push_back(key);
}

const SchemaEntry* Schema::find(const std::string& key) const {
  for (const auto& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

}  // namespace shardkit
