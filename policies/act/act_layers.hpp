// ACT's transformer layers (the wrap units ACTEncoderLayer and ACTDecoderLayer) and stacks,
// with LeRobot's parameter names (self_attn, multihead_attn, linear1/2, norm1..3). The attention
// modules and the feed-forward linears are LoRA layers: --peft.* puts adapters on them under
// PEFT's names for LeRobot's ACT.
#pragma once

#include <torch/torch.h>

#include <shardkit/nn/attention.hpp>
#include <shardkit/nn/block.hpp>
#include <shardkit/nn/dropout.hpp>
#include <shardkit/nn/lora_linear.hpp>

#include <string>

namespace shardkit::act {

struct LayerOptions {
  std::int64_t dim_model = 512, n_heads = 8, dim_feedforward = 3200;
  double dropout = 0.1;
  std::string activation = "relu";  ///< relu, gelu or glu
  bool pre_norm = false;
};

/// Self-attention and feed-forward, post-norm unless pre_norm. Inputs {x (S, B, D), pos_embed
/// (S, 1|B, D), key_padding_mask (B, S) bool (true = ignore), or undefined}; output {x}, or
/// with `first_position_only` {x (1, B, D)}: only the first position queries (over all keys), so
/// the attention output projection, norms and feed-forward run on one position instead of S.
class ACTEncoderLayerImpl : public nn::ListBlock {
 public:
  explicit ACTEncoderLayerImpl(const LayerOptions& o, bool first_position_only = false);

 protected:
  nn::TensorList forward_impl(const nn::TensorList& inputs) override;

 private:
  LayerOptions o_;
  bool first_position_only_;
  nn::MultiheadAttention self_attn{nullptr};
  nn::LoraLinear linear1{nullptr}, linear2{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  nn::Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
};
TORCH_MODULE(ACTEncoderLayer);

/// Self-attention over the queries, cross-attention to the encoder, feed-forward. Inputs {x
/// (DS, B, D), encoder_out (ES, B, D), decoder_pos_embed (DS, 1, D), encoder_pos_embed (ES, 1, D)};
/// output {x}.
class ACTDecoderLayerImpl : public nn::ListBlock {
 public:
  explicit ACTDecoderLayerImpl(const LayerOptions& o);

 protected:
  nn::TensorList forward_impl(const nn::TensorList& inputs) override;

 private:
  LayerOptions o_;
  nn::MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  nn::LoraLinear linear1{nullptr}, linear2{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  nn::Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
};
TORCH_MODULE(ACTDecoderLayer);

/// `layers` encoder layers, then a LayerNorm when pre_norm (LeRobot's ACTEncoder). With
/// `first_position_only` the output is the first position alone (1, B, D), all a caller that
/// reads only it needs (ACT's VAE encoder reads its cls token): the last layer computes it alone.
class ACTEncoderImpl : public torch::nn::Module {
 public:
  ACTEncoderImpl(const LayerOptions& o, std::int64_t layers, bool first_position_only = false);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& pos_embed, const torch::Tensor& key_padding_mask = {});

 private:
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(ACTEncoder);

/// `layers` decoder layers, then a LayerNorm (LeRobot's ACTDecoder).
class ACTDecoderImpl : public torch::nn::Module {
 public:
  ACTDecoderImpl(const LayerOptions& o, std::int64_t layers);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& encoder_out, const torch::Tensor& decoder_pos_embed,
                        const torch::Tensor& encoder_pos_embed);

 private:
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(ACTDecoder);

}  // namespace shardkit::act
