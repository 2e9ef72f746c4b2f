// shardkit::nn::MultiheadAttention: torch.nn.MultiheadAttention's parameters (in_proj_weight,
// in_proj_bias, out_proj.weight, out_proj.bias), initialisation and training arithmetic, for
// sequence-first inputs, returning the attention output only.
//
// It follows the Python function's op order (the path that also returns weights, which is the
// one LeRobot's ACT runs): in-projection packed for one tensor, split for query/key-value or
// three inputs; scores = baddbmm(key padding as -inf, q / sqrt(head_dim), k^T); softmax;
// dropout; bmm with v; out_proj. It differs from torch::nn::MultiheadAttention in three costs:
// inputs are compared by identity, not by value (LibTorch's torch::equal passes); the
// attention probabilities use shardkit::nn::dropout; no head-averaged weights are formed.
//
// It takes LoRA adapters as PEFT's lora.MultiheadAttention does: enable_lora() puts one adapter
// on the packed in-projection (`lora_A` embed_dim -> r, `lora_B` r -> 3 embed_dim: q, k and v
// together, as PEFT can only adapt them) and one on out_proj, registered as
// `base_layer.out_proj.lora_A` / `lora_B`, the names PEFT's wrapped out_proj gives them in
// adapter_model.safetensors (`<attn>.base_layer.out_proj.lora_A.weight`). Both are folded into
// the weights for each forward (in_proj_weight + B A * alpha / r, and out_proj's likewise), as
// PEFT merges them around torch's forward, so the adapters take no dropout (PEFT's lora_dropout
// has no effect there either). The base parameters keep torch's names. The adapters live only as
// registered submodules (free functions below), so the class's layout is that of a
// MultiheadAttention without LoRA.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <optional>
#include <string>

#include "shardkit/nn/lora_capable.hpp"

namespace shardkit::nn {

class MultiheadAttentionImpl : public torch::nn::Cloneable<MultiheadAttentionImpl>, public LoraCapable {
 public:
  /// `embed_dim` must be a multiple of `num_heads`; `dropout` is on the attention probabilities.
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, double dropout = 0.0);
  void reset() override;
  /// query (T, B, E), key and value (S, B, E); key_padding_mask (B, S) bool, true = ignore, or
  /// undefined. Returns (T, B, E).
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                        const torch::Tensor& key_padding_mask = {});

  /// LoraCapable: enable_lora(*this, r, alpha) below (`dropout` has no effect: the adapters are
  /// folded into the weights, as PEFT's are); an attention, adapted only when named.
  void enable_lora(std::int64_t r, double alpha, double dropout) override;
  bool lora_is_linear() const override { return false; }
  /// For a target naming q_proj, k_proj, v_proj, in_proj(_weight) or out_proj: why such a part
  /// cannot be adapted alone, and that the attention `module_name` can be named instead.
  std::string lora_target_hint(const std::string& target, const std::string& module_name) const override;

  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr};

 private:
  std::int64_t embed_dim_, num_heads_;
  double dropout_;
};
TORCH_MODULE(MultiheadAttention);

/// The adapters of an attention once LoRA is enabled: the in-projection's (`in_A` embed_dim -> r,
/// `in_B` r -> 3 embed_dim) and out_proj's, with their scaling alpha / r.
struct AttentionLora {
  torch::nn::Linear in_A{nullptr}, in_B{nullptr}, out_A{nullptr}, out_B{nullptr};
  double scaling = 0;
};

/// PEFT's lora.MultiheadAttention on `attention`: adapters of rank `r` (scaling `alpha` / `r`)
/// on the packed in-projection and on out_proj; freezes in_proj_weight, in_proj_bias and
/// out_proj. No dropout (the adapters are folded into the weights, as PEFT's are). clone() is
/// not supported after it. ConfigError when r < 1, RuntimeError when called twice.
void enable_lora(MultiheadAttentionImpl& attention, std::int64_t r, double alpha);
/// The adapters of `attention`, or std::nullopt before enable_lora().
std::optional<AttentionLora> lora_of(const MultiheadAttentionImpl& attention);

}  // namespace shardkit::nn
