// shardkit::nn::apply_rotary: rotary position embeddings applied to queries or keys, as
// transformers' apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1]
// (x1, x2 the two halves of the last dimension).
//
// When cos and sin need no gradient (they are tables of positions), forward writes x * cos and
// adds each half's rotated product into it in place (two passes over x), and backward does the
// same with the transposed rotation: the op-by-op formula makes a negated half, a concatenation,
// two products and a sum forward, and about as many tensors backward. In a low precision each
// half's sum is rounded once where the formula rounds the product first (within one ulp).
#pragma once

#include <torch/types.h>

namespace shardkit::nn {

/// x (..., T, D) with D even; cos and sin broadcastable to x, with last dimension D.
torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace shardkit::nn
