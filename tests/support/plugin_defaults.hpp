// Test helper: fills a plugin context's options with the plugin's declared defaults, as the host does.
#pragma once

#include <cstdint>
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit::test {

/// Sets every option `descriptor` declares to its default value, typed as declared.
inline void set_option_defaults(const PluginDescriptor& descriptor, Config& options) {
  for (std::uint32_t i = 0; i < descriptor.num_options; ++i) {
    const auto& spec = descriptor.options[i];
    if (spec.type == OptionType::Int) options.set(spec.name, std::int64_t{std::stoll(spec.default_value)});
    else if (spec.type == OptionType::Float) options.set(spec.name, std::stod(spec.default_value));
    else if (spec.type == OptionType::Bool) options.set(spec.name, std::string(spec.default_value) == "true");
    else options.set(spec.name, std::string(spec.default_value));
  }
}

}  // namespace shardkit::test
