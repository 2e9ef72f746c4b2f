// The wrap options shared by sharded backends, read from a backend's configuration.
#include <boost/json.hpp>

#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/sharding.hpp"

namespace shardkit {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> parse_class_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> classes;
  const auto t = trim(text);
  if (t.empty()) return classes;
  if (t.front() == '[') {
    boost::system::error_code ec;
    const auto value = boost::json::parse(t, ec);
    if (ec || !value.is_array())
      throw ConfigError(flag + "='" + text + "' is not a JSON list of class names; write it as '[\"MyBlock\"]'");
    for (const auto& item : value.as_array()) {
      if (!item.is_string())
        throw ConfigError(flag + "='" + text + "': every entry must be a class name in quotes");
      classes.emplace_back(item.as_string().c_str());
    }
    return classes;
  }
  return comma_list(t);
}

}  // namespace

void read_wrap_options(const Config& config, ShardingOptions& options) {
  options.wrap_classes = parse_class_list(config.get_string("wrap_modules"), options.option_prefix + "wrap_modules");
  options.min_num_params = config.get_int("min_num_params");
  if (!options.wrap_classes.empty() && options.min_num_params > 0)
    throw ConfigError(options.option_prefix + "wrap_modules and " + options.option_prefix +
                      "min_num_params both choose the wrap units, by class and by size: give one of them "
                      "(as FSDP's auto-wrap policy is either transformer-based or size-based)");
  options.ignored_modules = config.get_string("ignored_modules");
  options.prefetch = config.get_bool("prefetch");
}

}  // namespace shardkit
