// Llama's modules with transformers' parameter names: RMSNorm, attention, MLP, the decoder layer
// and the model, with what Mistral, Qwen2 and Qwen3 change (q/k/v biases, q_norm/k_norm, sliding
// attention windows). The projections are LoraLinear: --peft.* puts LoRA adapters on them.
#pragma once

#include <torch/torch.h>

#include <utility>

#include <shardkit/nn/block.hpp>
#include <shardkit/nn/lora_linear.hpp>

#include "llama_config.hpp"

namespace shardkit::llama {

/// weight * x / sqrt(mean(x^2) + eps), the normalisation in fp32 and cast back to x's dtype.
class LlamaRMSNormImpl : public torch::nn::Module {
 public:
  LlamaRMSNormImpl(std::int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(LlamaRMSNorm);

/// Grouped-query self-attention with rotary embeddings: q_proj, k_proj, v_proj, o_proj, and
/// Qwen3's q_norm and k_norm (RMSNorm of each head before the rotation).
class LlamaAttentionImpl : public torch::nn::Module {
 public:
  explicit LlamaAttentionImpl(const LlamaConfig& c);
  /// x (B, T, hidden); cos, sin (T, head_dim); mask (B, 1, T, T) bool, true = may attend, and
  /// keep (B, 1, T, 1), 0 for a query whose output is zeroed: sdpa_mask's pair; or both
  /// undefined: causal attention with nothing padded or packed.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& mask, const torch::Tensor& keep);

 private:
  LlamaConfig c_;
  nn::LoraLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  LlamaRMSNorm q_norm{nullptr}, k_norm{nullptr};
};
TORCH_MODULE(LlamaAttention);

/// SwiGLU: down_proj(silu(gate_proj(x)) * up_proj(x)).
class LlamaMLPImpl : public torch::nn::Module {
 public:
  explicit LlamaMLPImpl(const LlamaConfig& c);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  nn::LoraLinear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(LlamaMLP);

/// One decoder layer, the wrap unit (named as the family's class: LlamaDecoderLayer,
/// Qwen2DecoderLayer, ...): x + attn(norm(x)), then + mlp(norm(.)).
/// Inputs {x (B, T, hidden), cos, sin (T, head_dim), mask (B, 1, T, T) bool, keep (B, 1, T, 1)
/// [, sliding mask, sliding keep]} (sdpa_mask's pairs, or one undefined pair: causal only);
/// output {x}. A sliding layer attends with the sliding pair.
class LlamaDecoderLayerImpl : public nn::ListBlock {
 public:
  LlamaDecoderLayerImpl(const LlamaConfig& c, bool sliding);

 protected:
  nn::TensorList forward_impl(const nn::TensorList& inputs) override;

 private:
  LlamaAttention self_attn{nullptr};
  LlamaMLP mlp{nullptr};
  LlamaRMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  bool sliding_;
};
TORCH_MODULE(LlamaDecoderLayer);

/// transformers' LlamaModel: embed_tokens, layers, norm; returns the last hidden states.
class LlamaModelImpl : public torch::nn::Module {
 public:
  explicit LlamaModelImpl(const LlamaConfig& c);
  /// input_ids (B, T) int64; attention_mask (B, T) with 1 = real token, or undefined (all real);
  /// position_ids (B, T), or undefined (0..T-1): packed sequences restart at 0, and a token
  /// attends only within its own sequence (a run from one 0 to the next).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& position_ids = {});
  torch::nn::Embedding embed_tokens{nullptr};

 private:
  LlamaConfig c_;
  torch::Tensor inv_freq_;  // not a buffer: transformers saves none
  torch::nn::ModuleList layers{nullptr};
  LlamaRMSNorm norm{nullptr};
};
TORCH_MODULE(LlamaModel);

/// The attention mask (B, 1, T, T), true = may attend: causal, not a padded key, with
/// `position_ids` within the query's own packed sequence (each starts where its position is 0),
/// and with `sliding_window` > 0 among the last `sliding_window` positions (the query's own included).
/// A row may be empty (a padded query before every real token, or with a window over padding
/// only): sdpa_mask makes what attention gets of it.
torch::Tensor attention_mask_4d(const torch::Tensor& attention_mask, std::int64_t batch, std::int64_t seq_len,
                                torch::Device device, const torch::Tensor& position_ids = {},
                                std::int64_t sliding_window = 0);

/// What attention is given for `mask` (attention_mask_4d's): the mask with each empty row given
/// its own query's key (no sdpa backend meets an empty row), and `keep` (B, 1, T, 1) of `dtype`,
/// 0 where the row was empty: such a query's output is zeroed, as torch's sdpa and transformers
/// give it.
std::pair<torch::Tensor, torch::Tensor> sdpa_mask(const torch::Tensor& mask, torch::ScalarType dtype);

}  // namespace shardkit::llama
