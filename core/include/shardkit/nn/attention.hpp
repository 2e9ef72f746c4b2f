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
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

namespace shardkit::nn {

class MultiheadAttentionImpl : public torch::nn::Cloneable<MultiheadAttentionImpl> {
 public:
  /// `embed_dim` must be a multiple of `num_heads`; `dropout` is on the attention probabilities.
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, double dropout = 0.0);
  void reset() override;
  /// query (T, B, E), key and value (S, B, E); key_padding_mask (B, S) bool, true = ignore, or
  /// undefined. Returns (T, B, E).
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                        const torch::Tensor& key_padding_mask = {});

  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr};

 private:
  std::int64_t embed_dim_, num_heads_;
  double dropout_;
};
TORCH_MODULE(MultiheadAttention);

}  // namespace shardkit::nn
