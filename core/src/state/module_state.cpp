// Replicated model state and parameter lists built from a module's parameters and buffers.
#include "shardkit/module_state.hpp"

namespace shardkit {

void add_replicated_module_state(ShardedState& state, const torch::nn::Module& module,
                                 const std::string& prefix) {
  for (const auto& item : module.named_parameters())
    state.add(prefix + item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()),
              /*replicated=*/true);
  for (const auto& item : module.named_buffers())
    state.add(prefix + item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()),
              /*replicated=*/true);
}

std::vector<ParamShard> replicated_param_shards(const torch::nn::Module& module) {
  std::vector<ParamShard> params;
  for (const auto& item : module.named_parameters()) {
    if (!item.value().requires_grad()) continue;
    params.push_back({item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()),
                      /*replicated=*/true});
  }
  return params;
}

}  // namespace shardkit
