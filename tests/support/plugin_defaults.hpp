// Test helpers: a plugin's options filled with its declared defaults, as the host does.
#pragma once

#include <cstdint>
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit::test {

/// Sets every option `descriptor` declares to its default value, typed as declared (an option
/// of another type than String with an empty default stays unset, as the host leaves it).
inline void set_option_defaults(const PluginDescriptor& descriptor, Config& options) {
  for (std::uint32_t i = 0; i < descriptor.num_options; ++i) {
    const auto& spec = descriptor.options[i];
    const std::string v = spec.default_value;
    if (v.empty() && spec.type != OptionType::String) continue;  // unset unless given, as the host does
    if (spec.type == OptionType::Int) options.set(spec.name, std::int64_t{std::stoll(v)});
    else if (spec.type == OptionType::Float) options.set(spec.name, std::stod(v));
    else if (spec.type == OptionType::Bool) options.set(spec.name, v == "true");
    else options.set(spec.name, v);
  }
}

/// A PluginContext whose options are the defaults plugin `name` of `kind` declares, for tests
/// that then set the few options they care about.
inline PluginContext context_with_defaults(const Registry& registry, const std::string& kind,
                                           const std::string& name) {
  PluginContext ctx;
  set_option_defaults(*registry.get(kind, name).descriptor, ctx.options);
  return ctx;
}

}  // namespace shardkit::test
