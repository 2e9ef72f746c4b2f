// Global gradient-norm clipping with a pluggable cross-rank reduction.
#include "shardkit/optim/grad_clip.hpp"

#include <cmath>

namespace shardkit {

double local_grad_sq_norm(const std::vector<torch::Tensor>& grads) {
  double sum = 0.0;
  for (const auto& g : grads) {
    if (!g.defined()) continue;
    const double n = g.norm().item<double>();
    sum += n * n;
  }
  return sum;
}

double clip_grad_norm(const std::vector<torch::Tensor>& grads, double max_norm,
                      const std::function<double(double)>& reduce_sum) {
  double sq = local_grad_sq_norm(grads);
  if (reduce_sum) sq = reduce_sum(sq);
  const double total = std::sqrt(sq);
  if (max_norm > 0) {
    const double coef = max_norm / (total + 1e-6);
    if (coef < 1.0) {
      torch::NoGradGuard no_grad;
      for (const auto& g : grads)
        if (g.defined()) g.mul_(coef);
    }
  }
  return total;
}

}  // namespace shardkit
