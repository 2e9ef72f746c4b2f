// LoRA-capable layers: PEFT's adapter pair, and shardkit::nn::LoraLinear, a Linear that can carry an adapter (PEFT's
// lora.Linear computation).
//
// LoraLinear's own parameters are named as torch::nn::Linear's ("weight", "bias"), so full-weight
// checkpoints keep the reference names. enable_lora() adds the submodules `lora_A` (in -> r, no
// bias, PEFT's kaiming-uniform init) and `lora_B` (r -> out, zeros) and freezes weight and bias;
// forward is then, as PEFT's:
//
//   base(x) + lora_B(lora_A(dropout(x))) * (lora_alpha / r)
//
//   auto proj = register_module("q_proj", shardkit::nn::LoraLinear(64, 64, /*bias=*/false));
//   proj->enable_lora(16, 8.0, 0.0);  // usually through the trainer's --peft.* options
//
// LoraLinear and shardkit::nn::MultiheadAttention (attention.hpp; PEFT's lora.MultiheadAttention,
// adapters on its packed in-projection and its out_proj) are shardkit::nn::LoraCapable: that is
// how a run with --peft.* options finds them.
#pragma once

#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "shardkit/nn/lora_capable.hpp"

namespace shardkit::nn {

/// PEFT's adapter for a map in_features -> out_features: `A` (in -> r, no bias) and `B`
/// (r -> out, no bias).
struct LoraPair {
  torch::nn::Linear A{nullptr}, B{nullptr};
};

/// Registers PEFT's adapter pair on `owner` as "lora_A" and "lora_B", initialised as PEFT's
/// init_lora_weights=True (A as a fresh Linear: kaiming-uniform, a = sqrt(5); B zeros), with
/// `like`'s device and dtype. Throws ConfigError when r < 1 (before registering anything).
LoraPair register_lora_pair(torch::nn::Module& owner, std::int64_t in_features, std::int64_t out_features,
                            std::int64_t r, const torch::TensorOptions& like);

class LoraLinearImpl : public torch::nn::Module, public LoraCapable {
 public:
  /// Weight (out, in) and, with `bias`, bias (out), initialised as torch::nn::Linear's.
  LoraLinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias);
  /// x W^T + b, plus the adapter's term when LoRA is enabled.
  torch::Tensor forward(const torch::Tensor& x);
  /// Adds the adapter (rank `r`, scaling `alpha` / `r`, dropout probability `dropout` on its
  /// input in training) and freezes weight and bias. Throws RuntimeError when called twice.
  void enable_lora(std::int64_t r, double alpha, double dropout) override;
  /// A linear map: --peft.target_modules=all-linear adapts it.
  bool lora_is_linear() const override { return true; }
  /// Whether enable_lora() was called.
  bool lora_enabled() const { return !lora_A.is_empty(); }
  /// lora_alpha / r (0 without LoRA).
  double scaling() const { return scaling_; }
  torch::Tensor weight;
  torch::Tensor bias;  ///< undefined without a bias
  torch::nn::Linear lora_A{nullptr};
  torch::nn::Linear lora_B{nullptr};

 private:
  std::int64_t in_features_, out_features_;
  double scaling_ = 0;
  double dropout_ = 0;
};
TORCH_MODULE(LoraLinear);

}  // namespace shardkit::nn
