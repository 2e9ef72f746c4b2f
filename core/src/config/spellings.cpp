// Two spellings of one option: `--save-freq` is `--save_freq`, and giving both is an error.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"

namespace shardkit {

std::string canonical_key(const std::string& key) {
  std::string out = key;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

RawConfig canonical_spellings(const RawConfig& raw) {
  RawConfig out;
  // The spelling each canonical key was first seen under, to name both when they clash.
  std::map<std::string, std::string> written;
  std::vector<std::string> errors;
  for (const auto& [key, value] : raw) {
    const std::string canonical = canonical_key(key);
    const auto [it, inserted] = written.emplace(canonical, key);
    if (!inserted) {
      const auto& first = raw.at(it->second);
      errors.push_back("--" + it->second + "=" + to_string(first.value) + " (from " +
                       config_detail::describe_origin(first.origin) + ") and --" + key + "=" +
                       to_string(value.value) + " (from " + config_detail::describe_origin(value.origin) +
                       ") are two spellings of the option --" + canonical + "; give it once");
      continue;
    }
    out.emplace(canonical, value);
  }
  throw_config_errors(errors);
  return out;
}

}  // namespace shardkit
