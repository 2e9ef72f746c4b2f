// Exact loss normalization: summed policy losses divided by the global count of the whole optimizer step.
#pragma once

#include <optional>
#include <vector>

#include <torch/types.h>

#include "shardkit/comm.hpp"
#include "shardkit/policy.hpp"

namespace shardkit::train {

/// Turns each micro-step's PolicyOutput into the tensor to run backward on, and finishes the
/// optimizer step. A mean loss (no normalizer) is divided by the accumulation steps, as
/// before. A summed loss is back-propagated as it is; at the optimizer step one all-reduce of
/// (sum, count) over the data-parallel group gives the global count N, and the synchronised
/// gradients (averaged over the D ranks by the backend) are multiplied by D / N: the gradient
/// of the global mean, whatever the split into micro-steps and ranks.
class StepLoss {
 public:
  /// The loss to back-propagate for this micro-step. Throws RuntimeError when a policy sets the
  /// normalizer on some micro-steps and not others.
  torch::Tensor backward_loss(const PolicyOutput& output, std::int64_t accum_steps);
  /// Whether the policy returns summed losses (known after the first micro-step).
  bool summed() const { return summed_.value_or(false); }
  /// At an optimizer step of a summed loss: rescales `grads` in place and returns the step's
  /// global mean loss. Collective over `dp`.
  double finish_step(const std::vector<torch::Tensor>& grads, CommGroup& dp);

 private:
  std::optional<bool> summed_;
  double sum_ = 0, count_ = 0;
};

}  // namespace shardkit::train
