// Whole-parameter model state: what every backend that keeps whole parameters reports.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>

#include "shardkit/backend.hpp"
#include "shardkit/precision.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// Adds every parameter, then every buffer, of `module` to `state` as one whole box each,
/// keyed `prefix` + its name, held as `replicas` says. The entries are views of the module's
/// tensors, so loading into `state` writes straight into the module.
void add_whole_module_state(ShardedState& state, const torch::nn::Module& module, Replicas replicas,
                            const std::string& prefix = "model.");

/// The trainable parameters of `module` (requires_grad), in registration order, each as a
/// whole ParamShard named by its fully qualified name and held as `replicas` says. A tensor
/// registered under several names (tied weights) appears once, under its first name.
std::vector<ParamShard> whole_param_shards(const torch::nn::Module& module, Replicas replicas);

/// The base of backends whose ranks each hold every parameter whole (single, ddp): the
/// parameters, the model state and gradient clipping, which need no communication once the
/// gradients are identical on every rank (after finish_gradients()).
class WholeParameterBackend : public Backend {
 public:
  /// `name` is the backend's, for messages; the context gives the run's mixed precision
  /// (autocast in forward, fp32 parameters).
  WholeParameterBackend(std::string name, const PluginContext& ctx);
  ~WholeParameterBackend() override;
  /// Remembers the policy and the ranks that hold copies of it (Replicas::none() alone).
  void setup(Policy& policy) override;
  std::vector<ParamShard> parameters() override;
  /// The policy's forward, under autocast when mixed precision is on.
  PolicyOutput forward(Policy& policy, const Batch& batch) override;
  /// The global norm from the local gradients: they are the same on every rank.
  double clip_grad_norm(double max_norm) override;
  void model_state(ShardedState& state) override;

 protected:
  /// Sets who holds copies of the parameters; call before or in setup(). Default: none().
  void set_replicas(Replicas replicas) { replicas_ = replicas; }
  /// The policy given to setup(); RuntimeError naming the backend before that.
  Policy& policy() const;

 private:
  std::string name_;
  Policy* policy_ = nullptr;
  Replicas replicas_ = Replicas::none();
  PrecisionPolicy precision_;
};

}  // namespace shardkit
