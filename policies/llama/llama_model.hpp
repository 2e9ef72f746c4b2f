// Llama's modules with transformers' parameter names: RMSNorm, attention, MLP, LlamaDecoderLayer, LlamaModel.
// The projections are LoraLinear: --peft.* puts LoRA adapters on them.
#pragma once

#include <torch/torch.h>

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

/// Grouped-query self-attention with rotary embeddings: q_proj, k_proj, v_proj, o_proj.
class LlamaAttentionImpl : public torch::nn::Module {
 public:
  explicit LlamaAttentionImpl(const LlamaConfig& c);
  /// x (B, T, hidden); cos, sin (T, head_dim); mask (B, 1, T, T) bool, true = may attend.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& mask);

 private:
  LlamaConfig c_;
  nn::LoraLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
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

/// One decoder layer, the wrap unit: x + attn(norm(x)), then + mlp(norm(.)).
/// Inputs {x (B, T, hidden), cos, sin (T, head_dim), mask (B, 1, T, T) bool}; output {x}.
class LlamaDecoderLayerImpl : public nn::ListBlock {
 public:
  explicit LlamaDecoderLayerImpl(const LlamaConfig& c);

 protected:
  nn::TensorList forward_impl(const nn::TensorList& inputs) override;

 private:
  LlamaAttention self_attn{nullptr};
  LlamaMLP mlp{nullptr};
  LlamaRMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
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

/// The attention mask (B, 1, T, T), true = may attend: causal, not a padded key, and, with
/// `position_ids`, within the query's own packed sequence (each starts where its position is 0).
/// A query that could attend to nothing (a padded position before every real token, left
/// padding) attends to itself instead, so no row is empty; its output is meaningless, as
/// transformers'.
torch::Tensor attention_mask_4d(const torch::Tensor& attention_mask, std::int64_t batch, std::int64_t seq_len,
                                torch::Device device, const torch::Tensor& position_ids = {});

}  // namespace shardkit::llama
