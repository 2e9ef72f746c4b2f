// LoRA layers: PEFT's adapter pair, and LoraLinear, the base linear map plus an optional
// low-rank adapter, as PEFT's lora.Linear.
#include "shardkit/nn/lora_linear.hpp"

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/nn/functional/linear.h>
#include <torch/nn/init.h>

#include <cmath>
#include <string>

#include "shardkit/error.hpp"
#include "shardkit/nn/dropout.hpp"

namespace shardkit::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// rows W^T + b + (rows A^T) B^T * scaling for rows (N, in) (b empty: none), as one node: backward adds the
/// adapter's share of the input gradient into the base's by one GEMM (beta 1) where autograd,
/// with the base and the adapter as separate nodes, would sum two input-sized gradients.
class LoraLinearFunction : public torch::autograd::Function<LoraLinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, const torch::Tensor& weight,
                               const torch::Tensor& bias, const torch::Tensor& a, const torch::Tensor& b,
                               double scaling) {
    auto out = bias.numel() > 0 ? torch::addmm(bias, rows, weight.t()) : torch::mm(rows, weight.t());
    const auto down = torch::mm(rows, a.t());
    out.addmm_(down, b.t(), 1.0, scaling);
    ctx->save_for_backward({rows, weight, a, b, down});
    ctx->saved_data["scaling"] = scaling;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    TORCH_CHECK(!torch::GradMode::is_enabled(), "shardkit::nn::LoraLinear does not support double backward");
    const auto saved = ctx->get_saved_variables();
    const auto &rows = saved[0], &weight = saved[1], &a = saved[2], &b = saved[3], &down = saved[4];
    const double scaling = ctx->saved_data["scaling"].toDouble();
    const auto& g = grad_outputs[0];
    torch::Tensor grad_rows, grad_weight, grad_bias, grad_a, grad_b, grad_down;
    if (ctx->needs_input_grad(0) || ctx->needs_input_grad(3)) grad_down = torch::mm(g, b).mul_(scaling);
    if (ctx->needs_input_grad(0)) grad_rows = torch::mm(g, weight).addmm_(grad_down, a);
    if (ctx->needs_input_grad(1)) grad_weight = torch::mm(g.t(), rows);
    if (ctx->needs_input_grad(2)) grad_bias = g.sum(0);
    if (ctx->needs_input_grad(3)) grad_a = torch::mm(grad_down.t(), rows);
    if (ctx->needs_input_grad(4)) grad_b = torch::mm(g.t(), down).mul_(scaling);
    return {grad_rows, grad_weight, grad_bias, grad_a, grad_b, torch::Tensor()};
  }
};

}  // namespace

LoraPair register_lora_pair(torch::nn::Module& owner, std::int64_t in_features, std::int64_t out_features,
                            std::int64_t r, const torch::TensorOptions& like) {
  if (r < 1) throw ConfigError("LoRA rank r must be at least 1, got " + std::to_string(r));
  // PEFT's init_lora_weights=True: A as a fresh Linear (kaiming-uniform, a = sqrt(5)), B zeros.
  LoraPair pair;
  pair.A = owner.register_module("lora_A", torch::nn::Linear(torch::nn::LinearOptions(in_features, r).bias(false)));
  pair.B = owner.register_module("lora_B", torch::nn::Linear(torch::nn::LinearOptions(r, out_features).bias(false)));
  pair.A->to(like.device(), like.dtype().toScalarType());
  pair.B->to(like.device(), like.dtype().toScalarType());
  torch::NoGradGuard no_grad;
  pair.B->weight.zero_();
  return pair;
}

LoraLinearImpl::LoraLinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias)
    : torch::nn::Module("LoraLinear"), in_features_(in_features), out_features_(out_features) {
  // torch::nn::Linear's reset(): kaiming-uniform weight (a = sqrt(5)), uniform bias in +-1/sqrt(in).
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias) {
    const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    this->bias = register_parameter("bias", torch::empty({out_features}).uniform_(-bound, bound));
  }
}

void LoraLinearImpl::enable_lora(std::int64_t r, double alpha, double dropout) {
  if (lora_enabled()) throw RuntimeError("LoRA is already enabled on this LoraLinear");
  // The weight's shape now: a token embedding's output layer may have grown since construction.
  const auto pair = register_lora_pair(*this, weight.size(1), weight.size(0), r, weight.options());
  lora_A = pair.A;
  lora_B = pair.B;
  weight.set_requires_grad(false);
  if (bias.defined()) bias.set_requires_grad(false);
  scaling_ = alpha / static_cast<double>(r);
  dropout_ = dropout;
}

torch::Tensor LoraLinearImpl::forward(const torch::Tensor& x) {
  if (!lora_enabled()) return torch::nn::functional::linear(x, weight, bias);
  // base(x) + lora_B(lora_A(dropout(x))) * scaling. Rows are flattened so that the output is a
  // tensor of its own, not a view, when a GEMM accumulates into it.
  const auto rows = x.reshape({-1, x.size(-1)});
  const auto dtype = rows.scalar_type();
  const auto& a = lora_A->weight;
  const auto& b = lora_B->weight;
  const bool same_dtype = weight.scalar_type() == dtype && a.scalar_type() == dtype && b.scalar_type() == dtype &&
                          (!bias.defined() || bias.scalar_type() == dtype);
  const bool autocast = at::autocast::is_autocast_enabled(rows.device().type());
  torch::Tensor out;
  if (same_dtype && !autocast && (dropout_ == 0.0 || !is_training())) {
    // No dropout: base and adapter as one node, the adapter's product and scaling accumulated
    // into the base output by one GEMM (beta 1, alpha scaling), forward and backward.
    // (Function::apply takes no undefined tensor: no bias is an empty one.)
    const auto no_bias = bias.defined() ? bias : torch::empty({0}, weight.options());
    out = LoraLinearFunction::apply(rows, weight, no_bias, a, b, scaling_);
  } else {
    out = torch::nn::functional::linear(rows, weight, bias);
    const auto down = lora_A(shardkit::nn::dropout(rows, dropout_, is_training()));
    if (out.scalar_type() == down.scalar_type() && down.scalar_type() == b.scalar_type())
      out.addmm_(down, b.t(), 1.0, scaling_);
    else  // autocast computes the linear maps in a lower precision than the parameters: its own casts
      out = out + lora_B(down) * scaling_;
  }
  auto shape = x.sizes().vec();
  shape.back() = out.size(-1);
  return out.view(shape);
}

}  // namespace shardkit::nn
