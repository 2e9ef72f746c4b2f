// Whole-parameter model state and parameter lists, and the backend base built on them.
#include "shardkit/module_state.hpp"

#include <set>

#include "shardkit/error.hpp"
#include "shardkit/optim/grad_clip.hpp"

namespace shardkit {

void add_whole_module_state(ShardedState& state, const torch::nn::Module& module, Replicas replicas,
                            const std::string& prefix) {
  for (const auto& item : module.named_parameters())
    state.add(prefix + item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()), replicas);
  for (const auto& item : module.named_buffers())
    state.add(prefix + item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()), replicas);
}

std::vector<ParamShard> whole_param_shards(const torch::nn::Module& module, Replicas replicas) {
  std::vector<ParamShard> params;
  std::set<const void*> seen;  // a tied parameter is stepped once, under its first name (as PyTorch)
  for (const auto& item : module.named_parameters()) {
    if (!item.value().requires_grad() || !seen.insert(item.value().unsafeGetTensorImpl()).second) continue;
    params.push_back({item.key(), item.value(), ShardLayout::whole(item.value().sizes().vec()), replicas});
  }
  return params;
}

WholeParameterBackend::WholeParameterBackend(std::string name, const PluginContext& ctx)
    : name_(std::move(name)), precision_(precision_of(ctx)) {}

PolicyOutput WholeParameterBackend::forward(Policy& policy, const Batch& batch) {
  const auto params = policy.parameters();
  AutocastGuard autocast(precision_, params.empty() ? torch::Device(torch::kCPU) : params.front().device());
  return policy.forward(batch);
}
WholeParameterBackend::~WholeParameterBackend() = default;

void WholeParameterBackend::setup(Policy& policy) { policy_ = &policy; }

Policy& WholeParameterBackend::policy() const {
  if (policy_ == nullptr) throw RuntimeError("backend " + name_ + ": setup() must be called first");
  return *policy_;
}

std::vector<ParamShard> WholeParameterBackend::parameters() { return whole_param_shards(policy(), replicas_); }

double WholeParameterBackend::clip_grad_norm(double max_norm) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters()) grads.push_back(p.param.grad());
  return shardkit::clip_grad_norm(grads, max_norm);
}

void WholeParameterBackend::model_state(ShardedState& state) { add_whole_module_state(state, policy(), replicas_); }

}  // namespace shardkit
