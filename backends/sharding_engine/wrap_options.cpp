// The wrap options shared by sharded backends, read from a backend's configuration.
#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/sharding.hpp"

namespace shardkit {

void read_wrap_options(const Config& config, ShardingOptions& options) {
  options.wrap_classes = class_name_list(config.get_string("wrap_modules"), options.option_prefix + "wrap_modules");
  options.min_num_params = config.get_int("min_num_params");
  if (!options.wrap_classes.empty() && options.min_num_params > 0)
    throw ConfigError(options.option_prefix + "wrap_modules and " + options.option_prefix +
                      "min_num_params both choose the wrap units, by class and by size: give one of them "
                      "(as FSDP's auto-wrap policy is either transformer-based or size-based)");
  options.ignored_modules = config.get_string("ignored_modules");
  options.prefetch = config.get_bool("prefetch");
}

}  // namespace shardkit
