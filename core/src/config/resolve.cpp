// resolve() and resolve_all(): check every given key, type and range against the schema and fill defaults.
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

using config_detail::describe_origin;

std::string unknown_key_message(const Schema& schema, const std::vector<std::string>& extras,
                                const std::string& key, const RawValue& raw) {
  std::vector<std::string> known;
  for (const auto& e : schema.entries()) known.push_back(e.key);
  known.insert(known.end(), extras.begin(), extras.end());
  const auto close = closest_names(key, known);
  std::string message = "unknown option --" + key + " (from " + describe_origin(raw.origin) + "); ";
  if (close.empty()) return message + "see --help for the accepted options";
  message += close.size() == 1 ? "did you mean " : "did you mean one of ";
  for (std::size_t i = 0; i < close.size(); ++i) message += (i ? ", --" : "--") + close[i];
  return message + "?";
}

}  // namespace

Config resolve(const Schema& schema, const RawConfig& file, const RawConfig& flags) {
  Config config;
  for (const auto& entry : schema.entries_) {
    // An empty default of a non-string option means "unset": the key stays absent.
    if (entry.default_value.empty() && entry.type != OptionType::String) continue;
    std::string problem;
    if (auto value = config_detail::convert_option(entry, Value{entry.default_value}, problem)) {
      config.set(entry.key, std::move(*value));
    } else {
      config.set(entry.key, Value{entry.default_value});  // "" for a string with choices
    }
  }

  RawConfig given = file;
  for (const auto& [key, raw] : flags) given[key] = raw;  // flags win

  std::vector<std::string> errors;
  for (const auto& [key, raw] : given) {
    if (const SchemaEntry* entry = schema.find(key)) {
      std::string problem;
      if (auto value = config_detail::convert_option(*entry, raw.value, problem)) {
        config.set(key, std::move(*value));
      } else {
        errors.push_back("--" + key + "=" + to_string(raw.value) + " (from " +
                         describe_origin(raw.origin) + "): " + problem);
      }
      continue;
    }
    bool extra = false;
    for (const auto& k : schema.extra_) extra = extra || k == key;
    if (extra) {
      config.set(key, Value{to_string(raw.value)});
      continue;
    }
    std::string owners, selector;
    for (const auto& inactive : schema.inactive_) {
      if (inactive.key != key) continue;
      if (owners.find(inactive.owner) != std::string::npos) continue;
      owners += (owners.empty() ? "" : " and ") + inactive.owner;
      if (selector.empty()) selector = inactive.selector;
    }
    if (!owners.empty()) {
      errors.push_back("--" + key + " (from " + describe_origin(raw.origin) +
                       ") is an option of " + owners + ", but " + selector +
                       " is selected; remove it or select that plugin");
      continue;
    }
    errors.push_back(unknown_key_message(schema, schema.extra_, key, raw));
  }

  throw_config_errors(errors);
  return config;
}

void throw_config_errors(const std::vector<std::string>& errors) {
  if (errors.empty()) return;
  if (errors.size() == 1) throw ConfigError(errors.front());
  std::string message = std::to_string(errors.size()) + " configuration errors:";
  for (const auto& e : errors) message += "\n  " + e;
  throw ConfigError(message);
}

Resolution resolve_all(const Schema& schema, const RawConfig& file, const RawConfig& flags) {
  RawConfig given = file;
  for (const auto& [key, raw] : flags) given[key] = raw;  // flags win
  // Each given value on its own: resolve() words the problem, and only valid values go on.
  Resolution out;
  RawConfig valid;
  for (const auto& [key, raw] : given) {
    try {
      resolve(schema, {}, RawConfig{{key, raw}});
      valid.emplace(key, raw);
    } catch (const ConfigError& e) {
      out.errors.push_back(e.what());
      if (schema.find(key) != nullptr) out.refused.insert(key);
    }
  }
  out.config = resolve(schema, {}, valid);
  for (const auto& [key, value] : out.config.values()) out.origins[key] = "default";
  for (const auto& [key, raw] : valid) out.origins[key] = raw.origin;
  return out;
}

}  // namespace shardkit
