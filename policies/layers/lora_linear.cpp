// LoRA layers: PEFT's adapter pair, and LoraLinear, the base linear map plus an optional
// low-rank adapter, as PEFT's lora.Linear.
#include "shardkit/nn/lora_linear.hpp"

#include <torch/nn/functional/linear.h>
#include <torch/nn/init.h>

#include <cmath>
#include <string>

#include "shardkit/error.hpp"
#include "shardkit/nn/dropout.hpp"

namespace shardkit::nn {

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
  // base(x) + lora_B(lora_A(dropout(x))) * scaling, with the adapter's product and the scaling
  // accumulated into the base output by one GEMM (beta 1, alpha scaling): no output-sized
  // product, scaled copy and sum, forward or backward. Rows are flattened so that the output
  // is a tensor of its own, not a view, when the GEMM writes into it.
  const auto rows = x.reshape({-1, x.size(-1)});
  auto out = torch::nn::functional::linear(rows, weight, bias);
  const auto down = lora_A(shardkit::nn::dropout(rows, dropout_, is_training()));
  if (out.scalar_type() == down.scalar_type() && down.scalar_type() == lora_B->weight.scalar_type())
    out.addmm_(down, lora_B->weight.t(), 1.0, scaling_);
  else  // autocast computes the linear maps in a lower precision than the parameters: its own casts
    out = out + lora_B(down) * scaling_;
  auto shape = x.sizes().vec();
  shape.back() = out.size(-1);
  return out.view(shape);
}

}  // namespace shardkit::nn
