// RMSNorm with a fused float32 path (see rms_norm.hpp).
#include "shardkit/nn/rms_norm.hpp"

#include <ATen/ops/_fused_rms_norm.h>
#include <torch/autograd.h>

#include <numeric>
#include <vector>

namespace shardkit::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class RmsNorm : public torch::autograd::Function<RmsNorm> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight, double eps) {
    auto [out, rstd] = at::_fused_rms_norm(x, {x.size(-1)}, weight, eps);
    ctx->save_for_backward({x, rstd, weight});
    return out;
  }

  // With y = x * rstd: d/dw = sum over rows of g * y; d/dx = rstd * (g w - y * mean(g w * y)).
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &rstd = saved[1], &weight = saved[2];
    TORCH_CHECK(!torch::GradMode::is_enabled(), "shardkit::nn::rms_norm does not support double backward");
    const auto& g = grad_outputs[0];
    const auto normed = x * rstd;
    torch::Tensor grad_x, grad_weight;
    if (ctx->needs_input_grad(1)) {
      std::vector<std::int64_t> leading(static_cast<std::size_t>(x.dim() - 1));
      std::iota(leading.begin(), leading.end(), 0);
      grad_weight = (g * normed).sum(leading);
    }
    if (ctx->needs_input_grad(0)) {
      auto scaled = g * weight;
      const auto dot = (scaled * normed).mean(-1, true);
      grad_x = scaled.addcmul_(normed, dot, -1).mul_(rstd);
    }
    return {grad_x, grad_weight, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 && x.device() == weight.device() &&
      weight.dim() == 1 && x.size(-1) == weight.size(0))
    return RmsNorm::apply(x, weight, eps);
  const auto dtype = x.scalar_type();
  const auto h = x.to(torch::kFloat32);
  const auto variance = h.pow(2).mean(-1, true);
  return weight * (h * torch::rsqrt(variance + eps)).to(dtype);
}

}  // namespace shardkit::nn
