// Out-of-line destructors and defaults of the plugin interfaces (anchors their type_info in core).
#include "shardkit/backend.hpp"
#include "shardkit/checkpoint_format.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/error.hpp"
#include "shardkit/policy.hpp"

namespace shardkit {

Policy::~Policy() = default;
Dataset::~Dataset() = default;
Backend::~Backend() = default;
CheckpointFormat::~CheckpointFormat() = default;

std::int64_t feature_numel(const PluginContext& ctx, const std::string& feature,
                           const std::string& policy) {
  const auto it = ctx.features.find(feature);
  if (it == ctx.features.end())
    throw ConfigError("policy '" + policy + "' needs a dataset feature '" + feature +
                      "', which the selected dataset does not provide; pick a --dataset.type "
                      "that has it");
  std::int64_t n = 1;
  for (const auto d : it->second) n *= d;
  return n;
}

}  // namespace shardkit
