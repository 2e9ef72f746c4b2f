// Llama's modules: the computation of transformers' LlamaModel (and MistralModel, Qwen2Model,
// Qwen3Model), reimplemented with LibTorch.
#include "llama_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <shardkit/error_text.hpp>
#include <shardkit/nn/rms_norm.hpp>
#include <shardkit/nn/rotary.hpp>

#include "llama_rope.hpp"

namespace shardkit::llama {

LlamaRMSNormImpl::LlamaRMSNormImpl(std::int64_t size, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({size}));
}

torch::Tensor LlamaRMSNormImpl::forward(const torch::Tensor& x) { return nn::rms_norm(x, weight, eps_); }

LlamaAttentionImpl::LlamaAttentionImpl(const LlamaConfig& c) : c_(c) {
  const auto q = c.num_attention_heads * c.head_dim, kv = c.num_key_value_heads * c.head_dim;
  q_proj = register_module("q_proj", nn::LoraLinear(c.hidden_size, q, c.qkv_bias));
  k_proj = register_module("k_proj", nn::LoraLinear(c.hidden_size, kv, c.qkv_bias));
  v_proj = register_module("v_proj", nn::LoraLinear(c.hidden_size, kv, c.qkv_bias));
  o_proj = register_module("o_proj", nn::LoraLinear(q, c.hidden_size, c.attention_bias));
  if (c.qk_norm) {
    q_norm = register_module("q_norm", LlamaRMSNorm(c.head_dim, c.rms_norm_eps));
    k_norm = register_module("k_norm", LlamaRMSNorm(c.head_dim, c.rms_norm_eps));
  }
}

torch::Tensor LlamaAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                          const torch::Tensor& mask, const torch::Tensor& keep) {
  const auto batch = x.size(0), seq = x.size(1);
  // (B, heads, T, head_dim), each head normalized first where the family does (Qwen3).
  const auto heads = [&](const torch::Tensor& t, LlamaRMSNorm& norm) {
    const auto split = t.view({batch, seq, -1, c_.head_dim});
    return (norm ? norm(split) : split).transpose(1, 2);
  };
  LlamaRMSNorm none{nullptr};
  auto q = nn::apply_rotary(heads(q_proj(x), q_norm), cos, sin);
  auto k = nn::apply_rotary(heads(k_proj(x), k_norm), cos, sin);
  auto v = heads(v_proj(x), none);
  const auto groups = c_.num_attention_heads / c_.num_key_value_heads;
  const double dropout = is_training() ? c_.attention_dropout : 0.0;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c_.head_dim));
  torch::Tensor out;
  if (!mask.defined()) {  // causal only: sdpa's own mask, and head h reads key/value head h / groups in place
    out = at::scaled_dot_product_attention(q, k, v, {}, dropout, true, scale, groups > 1);
  } else {
    if (groups > 1) {  // transformers' repeat_kv: sdpa with an explicit mask
      k = k.repeat_interleave(groups, 1);
      v = v.repeat_interleave(groups, 1);
    }
    out = at::scaled_dot_product_attention(q, k, v, mask, dropout, false, scale) * keep.to(q.scalar_type());
  }
  return o_proj(out.transpose(1, 2).reshape({batch, seq, -1}));
}

LlamaMLPImpl::LlamaMLPImpl(const LlamaConfig& c) {
  const auto linear = [&](std::int64_t in, std::int64_t out) { return nn::LoraLinear(in, out, c.mlp_bias); };
  gate_proj = register_module("gate_proj", linear(c.hidden_size, c.intermediate_size));
  up_proj = register_module("up_proj", linear(c.hidden_size, c.intermediate_size));
  down_proj = register_module("down_proj", linear(c.intermediate_size, c.hidden_size));
}

torch::Tensor LlamaMLPImpl::forward(const torch::Tensor& x) { return down_proj(torch::silu(gate_proj(x)) * up_proj(x)); }

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaConfig& c, bool sliding)
    : ListBlock(names_of(c.family).decoder_layer), sliding_(sliding) {
  self_attn = register_module("self_attn", LlamaAttention(c));
  mlp = register_module("mlp", LlamaMLP(c));
  input_layernorm = register_module("input_layernorm", LlamaRMSNorm(c.hidden_size, c.rms_norm_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", LlamaRMSNorm(c.hidden_size, c.rms_norm_eps));
}

nn::TensorList LlamaDecoderLayerImpl::forward_impl(const nn::TensorList& in) {
  const std::size_t mask = sliding_ && in.size() > 5 ? 5 : 3;
  auto x = in[0] + self_attn(input_layernorm(in[0]), in[1], in[2], in[mask], in[mask + 1]);
  return {x + mlp(post_attention_layernorm(x))};
}

LlamaModelImpl::LlamaModelImpl(const LlamaConfig& c) : c_(c), inv_freq_(inverse_frequencies(c)) {
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(c.vocab_size, c.hidden_size));
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i)
    layers->push_back(LlamaDecoderLayer(c, c.sliding_layers.at(static_cast<std::size_t>(i))));
  norm = register_module("norm", LlamaRMSNorm(c.hidden_size, c.rms_norm_eps));
}

torch::Tensor LlamaModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                      const torch::Tensor& position_ids) {
  auto x = embed_tokens(input_ids);
  const auto batch = input_ids.size(0), seq = input_ids.size(1);
  auto [cos, sin] = rotary_tables(inv_freq_, seq, x.scalar_type(), x.device());
  if (position_ids.defined()) {  // each token's own position's row: (B, 1, T, head_dim)
    const auto positions = position_ids.to(x.device()).to(torch::kLong);
    cos = cos.index({positions}).unsqueeze(1);
    sin = sin.index({positions}).unsqueeze(1);
  }
  // Each mask once for every layer: what sdpa is given, and which queries keep their output.
  nn::TensorList inputs{x, cos, sin};
  const auto add_mask = [&](std::int64_t window) {
    auto [mask, keep] = sdpa_mask(attention_mask_4d(attention_mask, batch, seq, x.device(), position_ids, window),
                                  x.scalar_type());
    inputs.push_back(std::move(mask));
    inputs.push_back(std::move(keep));
  };
  // The sliding layers' mask too, when some layer slides and a sequence is longer than the window.
  const bool slides = std::find(c_.sliding_layers.begin(), c_.sliding_layers.end(), true) != c_.sliding_layers.end();
  const bool windowed = slides && seq > c_.sliding_window;
  // No padding, no packed sequences, no window: the layers get no mask and attend causally
  // (transformers' is_causal path), which spares sdpa a (B, 1, T, T) mask and GQA its repeats.
  if (!position_ids.defined() && !windowed && (!attention_mask.defined() || attention_mask.all().item<bool>())) {
    inputs.insert(inputs.end(), {torch::Tensor(), torch::Tensor()});
  } else {
    add_mask(0);
    if (windowed) add_mask(c_.sliding_window);
  }
  for (std::size_t i = 0; i < layers->size(); ++i) {
    inputs[0] = x;
    try {
      x = layers->ptr(i)->as<LlamaDecoderLayerImpl>()->forward(inputs)[0];
    } catch (...) {  // a LibTorch error names the layer it came from
      ErrorPlace place;
      place.module = "model.layers." + std::to_string(i) + " (" + names_of(c_.family).decoder_layer + ")";
      rethrow_with_context(place);
    }
  }
  return norm(x);
}

std::pair<torch::Tensor, torch::Tensor> sdpa_mask(const torch::Tensor& mask, torch::ScalarType dtype) {
  // A query with no key to attend to (a padded position before every real token, or beyond a
  // sliding window of padding) gets a zero output, as torch's scaled_dot_product_attention gives
  // it on the CPU and transformers with it; sdpa itself sees the query's own key there instead,
  // so that no backend meets an empty row (a NaN would reach the real tokens in the next layer).
  const auto seq = mask.size(-1);
  const auto has_key = mask.any(-1, true);  // (B, 1, T, 1)
  return {mask | (has_key.logical_not() & torch::eye(seq, mask.options()).view({1, 1, seq, seq})), has_key.to(dtype)};
}

torch::Tensor attention_mask_4d(const torch::Tensor& attention_mask, std::int64_t batch, std::int64_t seq_len,
                                torch::Device device, const torch::Tensor& position_ids, std::int64_t sliding_window) {
  const auto opts = torch::TensorOptions().dtype(torch::kBool).device(device);
  auto mask = torch::ones({seq_len, seq_len}, opts).tril();
  if (sliding_window > 0) mask = mask.triu(-(sliding_window - 1));  // key > query - window, as transformers
  mask = mask.view({1, 1, seq_len, seq_len});
  if (position_ids.defined()) {
    const auto sequence = position_ids.to(device).eq(0).to(torch::kLong).cumsum(1);  // (B, T): which sequence
    mask = mask & sequence.unsqueeze(2).eq(sequence.unsqueeze(1)).unsqueeze(1);
  }
  if (!attention_mask.defined()) return mask.expand({batch, 1, seq_len, seq_len});
  return mask & attention_mask.to(device).to(torch::kBool).view({batch, 1, 1, seq_len});
}

}  // namespace shardkit::llama
