// AdamW whose state is keyed by parameter name, so it survives sharding and resharding.
#pragma once

#include <map>
#include <utility>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/backend.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// AdamW hyper-parameters (PyTorch's defaults except weight_decay, LeRobot's 1e-2 too).
struct AdamWOptions {
  double lr = 1e-3;            ///< peak learning rate (the scheduler scales it)
  double beta1 = 0.9;          ///< default 0.9
  double beta2 = 0.999;        ///< default 0.999
  double eps = 1e-8;           ///< default 1e-8
  double weight_decay = 1e-2;  ///< decoupled weight decay, default 1e-2
  /// Parameters whose names start with `first` step with `second` x the learning rate given to
  /// step() (the first matching prefix counts); default none.
  std::vector<std::pair<std::string, double>> lr_factors;
};

/// AdamW (Loshchilov & Hutter) with the arithmetic of torch.optim.AdamW: PyTorch's fused kernel
/// (fused=True) for contiguous float32/float64 parameters on CPU or CUDA, its single-tensor path
/// for others. State per parameter name: exp_avg, exp_avg_sq, step.
class AdamW {
 public:
  /// `step_replicas`: the ranks that hold identical step counters (every rank of the run that
  /// steps a piece of the same parameters; Replicas::none() for one process).
  AdamW(std::vector<ParamShard> params, AdamWOptions options, Replicas step_replicas);

  /// One update with learning rate `lr` on every parameter that has a gradient.
  void step(double lr);
  /// Drops the gradients (sets them undefined).
  void zero_grad();

  /// Adds "optimizer.state.<name>.{exp_avg,exp_avg_sq,step}" entries laid out like
  /// their parameters. State is created (zeros) if no step was taken yet, so a fresh
  /// optimizer can receive a loaded state.
  void state(ShardedState& out);
  /// The param-group settings as JSON (optimizer_param_groups.json).
  std::string param_groups_json(double current_lr) const;
  /// Adds the param group as torch.optim.AdamW's, keyed as accelerate's DCP save flattens
  /// it: "optimizer.param_groups.0.<field>" for lr (`current_lr`), initial_lr, betas, eps,
  /// weight_decay, amsgrad, maximize, foreach, capturable, differentiable, fused,
  /// decoupled_weight_decay, and params (the parameter names), so that Python loads the
  /// DCP optimizer folder into a torch.optim.AdamW.
  void param_groups(ShardedState& out, double current_lr) const;
  /// What a loaded param group (`loaded`, filled by a format from a checkpoint) sets
  /// differently from these options: one "weight_decay=0.1 (the options say 0.01)" per field
  /// among betas, eps and weight_decay; empty when they agree or were not loaded.
  std::vector<std::string> param_group_differences(const ShardedState& loaded) const;

  const AdamWOptions& options() const { return options_; }
  const std::vector<ParamShard>& params() const { return params_; }

 private:
  struct Slot {
    torch::Tensor exp_avg, exp_avg_sq, step;  // step: float32 scalar, as PyTorch keeps it
  };
  Slot& slot_for(const ParamShard& p);

  std::vector<ParamShard> params_;
  std::vector<double> lr_factor_;  // per entry of params_
  AdamWOptions options_;
  Replicas step_replicas_;
  std::map<std::string, Slot> slots_;
};

}  // namespace shardkit
