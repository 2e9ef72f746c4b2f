// Which parameters form which sharding unit: wrap blocks, the root unit, whole parameters.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "shardkit/nn/block.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/sharding.hpp"

namespace shardkit::shard {

/// A parameter under all its names (tied parameters have several).
using NamedParam = std::pair<std::vector<std::string>, torch::Tensor>;

struct UnitSpec {
  std::string name;
  nn::BlockBase* block = nullptr;  ///< the wrap block, or nullptr (root unit, gradient bucket)
  std::vector<NamedParam> params;
};

struct UnitSelection {
  std::vector<UnitSpec> units;    ///< wrap units in registration order, then the root unit
  std::vector<NamedParam> whole;  ///< parameters that stay whole on every rank
};

/// Wrap units from the options or the policy (ShardingOptions::wrap_classes, else
/// min_num_params, else policy.wrap_modules()); throws ConfigError when there are none, when a
/// class names no block, or when tied parameters sit in two units.
UnitSelection select_wrap_units(Policy& policy, const ShardingOptions& options);
/// ZeRO-1/2: every parameter that is not whole, in buckets of at most `bucket_numel` elements
/// (at least one parameter each; auto_bucket_numel() when 0), in reverse registration order
/// (the order backward produces gradients).
UnitSelection select_gradient_buckets(Policy& policy, const ShardingOptions& options);
/// The automatic bucket size for `numel` sharded elements: DeepSpeed's default of 5e8; with
/// reduce-scatters (stage 2) an eighth of the elements when that is smaller, so that the two
/// buckets in flight hold about a quarter of the gradients whole however small the model (more
/// where one parameter is larger than a bucket: a bucket holds at least one). Stage 1 keeps its
/// gradients whole anyway; smaller buckets would only add collectives there.
std::int64_t auto_bucket_numel(std::int64_t numel, bool reduce_scatter);

}  // namespace shardkit::shard
