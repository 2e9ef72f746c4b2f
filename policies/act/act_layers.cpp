// ACT's transformer layers, following LeRobot 0.6.1's ACTEncoderLayer/ACTDecoderLayer step by step.
#include "act_layers.hpp"

#include <shardkit/error.hpp>

namespace shardkit::act {
namespace {

nn::MultiheadAttention attention(const LayerOptions& o) {
  return nn::MultiheadAttention(o.dim_model, o.n_heads, o.dropout);
}

torch::nn::LayerNorm layer_norm(std::int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}));
}

torch::Tensor activate(const std::string& name, const torch::Tensor& x) {
  if (name == "relu") return torch::relu(x);
  if (name == "gelu") return torch::gelu(x);
  return torch::glu(x, -1);  // "glu", checked when the options were read
}

torch::Tensor with(const torch::Tensor& x, const torch::Tensor& pos) { return pos.defined() ? x + pos : x; }

/// After a residual sum, the input of the next sub-layer and its skip: pre-norm normalises the
/// sum with the next sub-layer's norm, post-norm with the norm of the sub-layer that just ended.
std::pair<torch::Tensor, torch::Tensor> next_sublayer(const torch::Tensor& sum, torch::nn::LayerNorm& ended,
                                                      torch::nn::LayerNorm& next, bool pre_norm) {
  if (pre_norm) return {next(sum), sum};
  auto normed = ended(sum);
  return {normed, normed};
}

/// glu halves the last dimension: linear2 then takes dim_feedforward / 2 inputs.
std::int64_t linear2_inputs(const LayerOptions& o) {
  return o.activation == "glu" ? o.dim_feedforward / 2 : o.dim_feedforward;
}

}  // namespace

ACTEncoderLayerImpl::ACTEncoderLayerImpl(const LayerOptions& o, bool first_position_only)
    : nn::ListBlock("ACTEncoderLayer"), o_(o), first_position_only_(first_position_only) {
  self_attn = register_module("self_attn", attention(o));
  linear1 = register_module("linear1", nn::LoraLinear(o.dim_model, o.dim_feedforward, /*bias=*/true));
  dropout = register_module("dropout", nn::Dropout(o.dropout));
  linear2 = register_module("linear2", nn::LoraLinear(linear2_inputs(o), o.dim_model, /*bias=*/true));
  norm1 = register_module("norm1", layer_norm(o.dim_model));
  norm2 = register_module("norm2", layer_norm(o.dim_model));
  dropout1 = register_module("dropout1", nn::Dropout(o.dropout));
  dropout2 = register_module("dropout2", nn::Dropout(o.dropout));
}

nn::TensorList ACTEncoderLayerImpl::forward_impl(const nn::TensorList& inputs) {
  auto x = inputs.at(0);
  const auto& pos = inputs.at(1);
  const auto& mask = inputs.at(2);
  auto skip = first_position_only_ ? x.narrow(0, 0, 1) : x;
  if (o_.pre_norm) x = norm1(x);
  const auto qk = with(x, pos);
  // Every position is a key and a value; the query is the first position alone when only it is read.
  x = self_attn(first_position_only_ ? qk.narrow(0, 0, 1) : qk, qk, x, mask);
  std::tie(x, skip) = next_sublayer(skip + dropout1(x), norm1, norm2, o_.pre_norm);
  x = linear2(dropout(activate(o_.activation, linear1(x))));
  x = skip + dropout2(x);
  if (!o_.pre_norm) x = norm2(x);
  return {x};
}

ACTDecoderLayerImpl::ACTDecoderLayerImpl(const LayerOptions& o) : nn::ListBlock("ACTDecoderLayer"), o_(o) {
  self_attn = register_module("self_attn", attention(o));
  multihead_attn = register_module("multihead_attn", attention(o));
  linear1 = register_module("linear1", nn::LoraLinear(o.dim_model, o.dim_feedforward, /*bias=*/true));
  dropout = register_module("dropout", nn::Dropout(o.dropout));
  linear2 = register_module("linear2", nn::LoraLinear(linear2_inputs(o), o.dim_model, /*bias=*/true));
  norm1 = register_module("norm1", layer_norm(o.dim_model));
  norm2 = register_module("norm2", layer_norm(o.dim_model));
  norm3 = register_module("norm3", layer_norm(o.dim_model));
  dropout1 = register_module("dropout1", nn::Dropout(o.dropout));
  dropout2 = register_module("dropout2", nn::Dropout(o.dropout));
  dropout3 = register_module("dropout3", nn::Dropout(o.dropout));
}

nn::TensorList ACTDecoderLayerImpl::forward_impl(const nn::TensorList& inputs) {
  auto x = inputs.at(0);
  const auto& encoder_out = inputs.at(1);
  const auto& decoder_pos = inputs.at(2);
  const auto& encoder_pos = inputs.at(3);
  auto skip = x;
  if (o_.pre_norm) x = norm1(x);
  const auto qk = with(x, decoder_pos);
  x = self_attn(qk, qk, x);
  std::tie(x, skip) = next_sublayer(skip + dropout1(x), norm1, norm2, o_.pre_norm);
  x = multihead_attn(with(x, decoder_pos), with(encoder_out, encoder_pos), encoder_out);
  std::tie(x, skip) = next_sublayer(skip + dropout2(x), norm2, norm3, o_.pre_norm);
  x = linear2(dropout(activate(o_.activation, linear1(x))));
  x = skip + dropout3(x);
  if (!o_.pre_norm) x = norm3(x);
  return {x};
}

ACTEncoderImpl::ACTEncoderImpl(const LayerOptions& o, std::int64_t layers, bool first_position_only) {
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < layers; ++i) layers_->push_back(ACTEncoderLayer(o, first_position_only && i == layers - 1));
  if (o.pre_norm) norm = register_module("norm", layer_norm(o.dim_model));
}

torch::Tensor ACTEncoderImpl::forward(torch::Tensor x, const torch::Tensor& pos_embed,
                                      const torch::Tensor& key_padding_mask) {
  for (const auto& layer : *layers_) x = layer->as<ACTEncoderLayerImpl>()->forward({x, pos_embed, key_padding_mask}).at(0);
  return norm ? norm(x) : x;
}

ACTDecoderImpl::ACTDecoderImpl(const LayerOptions& o, std::int64_t layers) {
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < layers; ++i) layers_->push_back(ACTDecoderLayer(o));
  norm = register_module("norm", layer_norm(o.dim_model));
}

torch::Tensor ACTDecoderImpl::forward(torch::Tensor x, const torch::Tensor& encoder_out,
                                      const torch::Tensor& decoder_pos_embed, const torch::Tensor& encoder_pos_embed) {
  for (const auto& layer : *layers_)
    x = layer->as<ACTDecoderLayerImpl>()->forward({x, encoder_out, decoder_pos_embed, encoder_pos_embed}).at(0);
  return norm(x);
}

}  // namespace shardkit::act
