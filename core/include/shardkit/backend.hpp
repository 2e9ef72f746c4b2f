// The distribution backend interface: how parameters, gradients and optimizer state are laid out.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/plugin.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// One tensor the optimizer steps: a whole parameter or this rank's shard of it.
struct ParamShard {
  std::string name;    ///< the parameter's fully qualified name in the policy
  torch::Tensor param;  ///< local tensor the optimizer updates (its .grad() is read)
  ShardLayout layout;   ///< where `param` lies in the global parameter
  Replicas replicas;    ///< the ranks holding the same values (no default: say it)
};

/// A distribution strategy. The trainer calls, per loop step (one micro-batch):
///   begin_micro_step(last micro-step of the update); forward(policy, batch); backward of the
///   loss; finish_gradients();
/// then on optimizer steps: clip_grad_norm(); the optimizer steps parameters(); zero grads;
/// after_optimizer_step(). Checkpoints are taken only after after_optimizer_step().
class Backend : public Plugin {
 public:
  ~Backend() override;
  /// Takes the policy (already on its device) and lays it out. Called once.
  virtual void setup(Policy& policy) = 0;
  /// The tensors the optimizer steps, in a fixed order.
  virtual std::vector<ParamShard> parameters() = 0;
  /// Starts a micro-step. `sync`: whether gradients are synchronised after its backward
  /// (false on non-final gradient-accumulation micro-steps, which keep local gradients).
  virtual void begin_micro_step(bool sync) = 0;
  /// The training forward of the micro-step. A sharded backend gathers parameters here
  /// (including those outside wrap units); the default runs the policy as it is.
  virtual PolicyOutput forward(Policy& policy, const Batch& batch) { return policy.forward(batch); }
  /// Completes gradient synchronisation after backward (waits for pending work).
  virtual void finish_gradients() = 0;
  /// Scales gradients so their global L2 norm is at most `max_norm` (no clipping
  /// when max_norm <= 0) and returns the norm before clipping.
  virtual double clip_grad_norm(double max_norm) = 0;
  /// After the optimizer stepped parameters(): bring the model's own parameters up to date
  /// (e.g. gather updated shards back into full parameters) before anything reads them.
  virtual void after_optimizer_step() {}
  /// Adds the model's state (parameters and buffers) under "model." to `state`.
  virtual void model_state(ShardedState& state) = 0;
  /// Called after `state`'s model entries were filled by a load: refresh anything
  /// derived from them (e.g. gathered copies).
  virtual void model_state_loaded() {}
};

}  // namespace shardkit
