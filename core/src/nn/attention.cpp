// Multi-head attention with torch.nn.MultiheadAttention's parameters and arithmetic (see
// shardkit/nn/attention.hpp).
#include "shardkit/nn/attention.hpp"

#include <torch/nn/init.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "shardkit/error.hpp"
#include "shardkit/nn/dropout.hpp"

namespace shardkit::nn {
namespace {

/// (L, B, E) -> (B * heads, L, E / heads), as the Python function reshapes q, k and v.
torch::Tensor split_heads(const torch::Tensor& x, std::int64_t batch_heads, std::int64_t head_dim) {
  return x.reshape({x.size(0), batch_heads, head_dim}).transpose(0, 1);
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, double dropout)
    : embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout) {
  if (embed_dim <= 0 || num_heads <= 0 || embed_dim % num_heads != 0)
    throw RuntimeError("multi-head attention: embed_dim (" + std::to_string(embed_dim) +
                       ") must be a positive multiple of num_heads (" + std::to_string(num_heads) + ")");
  reset();
}

void MultiheadAttentionImpl::reset() {
  // The order of torch::nn::MultiheadAttention's reset(), so a seed gives the same weights:
  // out_proj's Linear initialisation, then xavier for the packed projection, zero biases.
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * embed_dim_, embed_dim_}));
  in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * embed_dim_}));
  out_proj = register_module("out_proj", torch::nn::Linear(embed_dim_, embed_dim_));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  in_proj_bias.zero_();
  out_proj->bias.zero_();
}

torch::Tensor MultiheadAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& key,
                                              const torch::Tensor& value, const torch::Tensor& key_padding_mask) {
  const auto tgt_len = query.size(0), batch = query.size(1), src_len = key.size(0);
  const auto head_dim = embed_dim_ / num_heads_;
  torch::Tensor q, k, v;
  if (key.is_same(value) && query.is_same(key)) {
    const auto chunks = torch::linear(query, in_proj_weight, in_proj_bias).chunk(3, -1);
    std::tie(q, k, v) = std::make_tuple(chunks[0], chunks[1], chunks[2]);
  } else if (key.is_same(value)) {
    const auto w = in_proj_weight.split_with_sizes({embed_dim_, 2 * embed_dim_});
    const auto b = in_proj_bias.split_with_sizes({embed_dim_, 2 * embed_dim_});
    q = torch::linear(query, w[0], b[0]);
    const auto kv = torch::linear(key, w[1], b[1]).chunk(2, -1);
    std::tie(k, v) = std::make_tuple(kv[0], kv[1]);
  } else {
    const auto w = in_proj_weight.chunk(3);
    const auto b = in_proj_bias.chunk(3);
    q = torch::linear(query, w[0], b[0]);
    k = torch::linear(key, w[1], b[1]);
    v = torch::linear(value, w[2], b[2]);
  }
  const auto batch_heads = batch * num_heads_;
  q = split_heads(q, batch_heads, head_dim);
  k = split_heads(k, batch_heads, head_dim);
  v = split_heads(v, batch_heads, head_dim);

  const auto q_scaled = q * std::sqrt(1.0 / static_cast<double>(head_dim));
  torch::Tensor scores;
  if (key_padding_mask.defined()) {
    const auto mask = torch::zeros({batch, src_len}, q.options())
                          .masked_fill_(key_padding_mask, -std::numeric_limits<double>::infinity())
                          .view({batch, 1, 1, src_len})
                          .expand({-1, num_heads_, -1, -1})
                          .reshape({batch_heads, 1, src_len});
    scores = torch::baddbmm(mask, q_scaled, k.transpose(-2, -1));
  } else {
    scores = torch::bmm(q_scaled, k.transpose(-2, -1));
  }
  auto probs = shardkit::nn::dropout(torch::softmax(scores, -1), dropout_, is_training());
  auto out = torch::bmm(probs, v).transpose(0, 1).contiguous().view({tgt_len * batch, embed_dim_});
  return out_proj(out).view({tgt_len, batch, embed_dim_});
}

}  // namespace shardkit::nn
