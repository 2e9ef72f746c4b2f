// Global gradient-norm clipping with a pluggable cross-rank reduction.
#include "shardkit/optim/grad_clip.hpp"

#include <cmath>

namespace shardkit {

double local_grad_sq_norm(const std::vector<torch::Tensor>& grads) {
  // One norm per tensor where the gradients live, then one copy to the host: a single
  // synchronisation on a GPU instead of one per tensor. Summed in double in tensor order.
  std::vector<torch::Tensor> norms;
  for (const auto& g : grads)
    if (g.defined()) norms.push_back(g.norm().to(torch::kDouble).reshape({1}));
  if (norms.empty()) return 0.0;
  const auto host = torch::cat(norms).cpu();
  const auto* each = host.data_ptr<double>();
  double sum = 0.0;
  for (std::int64_t i = 0; i < host.numel(); ++i) sum += each[i] * each[i];
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
