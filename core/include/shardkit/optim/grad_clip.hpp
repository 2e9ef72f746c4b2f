// Global gradient-norm clipping, shared by every backend (they only differ in the reduction).
#pragma once

#include <functional>
#include <vector>

#include <torch/types.h>

namespace shardkit {

/// Sum of squared L2 norms of the defined gradients, in float64.
double local_grad_sq_norm(const std::vector<torch::Tensor>& grads);

/// Clips like torch.nn.utils.clip_grad_norm_: total = sqrt(global sum of squares),
/// grads *= min(1, max_norm / (total + 1e-6)). `reduce_sum` turns the local sum of
/// squares into the global one (identity for one process). Returns `total`.
/// max_norm <= 0 disables clipping but still returns the norm.
double clip_grad_norm(const std::vector<torch::Tensor>& grads, double max_norm,
                      const std::function<double(double)>& reduce_sum = nullptr);

}  // namespace shardkit
