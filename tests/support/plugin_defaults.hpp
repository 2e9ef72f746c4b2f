// Tests that create a plugin through the registry: a context holding every declared option's default.
#pragma once

#include <string>

#include "shardkit/loader.hpp"
#include "shardkit/plugin.hpp"

namespace shardkit::test {

/// A PluginContext whose options are the defaults plugin `name` of `kind` declares (typed as
/// declared), for tests that then set the few options they care about.
inline PluginContext context_with_defaults(const Registry& registry, const std::string& kind,
                                           const std::string& name) {
  PluginContext ctx;
  const auto* d = registry.get(kind, name).descriptor;
  for (std::uint32_t i = 0; i < d->num_options; ++i) {
    const auto& spec = d->options[i];
    const std::string v = spec.default_value;
    if (spec.type == OptionType::Int) ctx.options.set(spec.name, std::int64_t{std::stoll(v)});
    else if (spec.type == OptionType::Float) ctx.options.set(spec.name, std::stod(v));
    else if (spec.type == OptionType::Bool) ctx.options.set(spec.name, v == "true");
    else ctx.options.set(spec.name, v);
  }
  return ctx;
}

}  // namespace shardkit::test
