// Replicated model state and parameters: what every backend that keeps whole parameters reports.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "shardkit/backend.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// Adds every parameter, then every buffer, of `module` to `state` as one whole box each,
/// keyed `prefix` + its name and marked replicated. The entries are views of the module's
/// tensors, so loading into `state` writes straight into the module.
void add_replicated_module_state(ShardedState& state, const torch::nn::Module& module,
                                 const std::string& prefix = "model.");

/// The trainable parameters of `module` (requires_grad), in registration order, each as a
/// whole, replicated ParamShard named by its fully qualified name.
std::vector<ParamShard> replicated_param_shards(const torch::nn::Module& module);

}  // namespace shardkit
