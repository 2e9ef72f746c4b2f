// Config: typed access to a resolved configuration, with errors that name the key.
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

const char* type_name(const Value& value) {
  switch (value.index()) {
    case 0: return "a bool";
    case 1: return "an int";
    case 2: return "a float";
    default: return "a string";
  }
}

[[noreturn]] void wrong_type(const std::string& key, const Value& value, const char* wanted) {
  throw ConfigError("config key '" + key + "' is " + type_name(value) + " (" + to_string(value) +
                    "), not " + wanted);
}

}  // namespace

bool Config::has(const std::string& key) const { return values_.count(key) != 0; }

const Value& Config::get(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) {
    throw ConfigError("config key '" + key + "' is not set (no default and not given as --" +
                      key + "=...)");
  }
  return it->second;
}

bool Config::get_bool(const std::string& key) const {
  const Value& v = get(key);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  wrong_type(key, v, "a bool");
}

std::int64_t Config::get_int(const std::string& key) const {
  const Value& v = get(key);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  wrong_type(key, v, "an int");
}

double Config::get_float(const std::string& key) const {
  const Value& v = get(key);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  wrong_type(key, v, "a float");
}

std::string Config::get_string(const std::string& key) const {
  const Value& v = get(key);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  wrong_type(key, v, "a string");
}

void Config::set(const std::string& key, Value value) { values_[key] = std::move(value); }

Config Config::section(const std::string& prefix) const {
  std::string p = prefix;
  if (!p.empty() && p.back() != '.') p += '.';  // "policy" means "policy."
  Config out;
  for (auto it = values_.lower_bound(p); it != values_.end(); ++it) {
    if (it->first.compare(0, p.size(), p) != 0) break;
    out.values_.emplace(it->first.substr(p.size()), it->second);
  }
  return out;
}

}  // namespace shardkit
