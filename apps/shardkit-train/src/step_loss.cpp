// Summed losses and their global count per optimizer step.
#include "step_loss.hpp"

#include <limits>

#include "shardkit/error.hpp"

namespace shardkit::train {

torch::Tensor StepLoss::backward_loss(const PolicyOutput& output, std::int64_t accum_steps) {
  const bool summed = output.normalizer.defined();
  if (summed_ && *summed_ != summed)
    throw RuntimeError("the policy returned a loss normalizer on some micro-steps and not on others; return it "
                       "always (a summed loss) or never (a mean loss)");
  summed_ = summed;
  if (!summed) return output.loss / static_cast<double>(accum_steps);
  sum_ += output.loss.detach().item<double>();
  count_ += output.normalizer.detach().item<double>();
  return output.loss;
}

double StepLoss::finish_step(const std::vector<torch::Tensor>& grads, CommGroup& dp) {
  auto totals = torch::tensor({sum_, count_}, torch::kFloat64);
  dp.all_reduce(totals, ReduceOp::Sum);
  sum_ = count_ = 0;
  const double sum = totals[0].item<double>(), count = totals[1].item<double>();
  if (count <= 0) return std::numeric_limits<double>::quiet_NaN();
  torch::NoGradGuard no_grad;
  const double factor = static_cast<double>(dp.size()) / count;
  for (const auto& g : grads)
    if (g.defined()) g.mul_(factor);
  return sum / count;
}

}  // namespace shardkit::train
