// shardkit::nn::rms_norm: transformers' RMSNorm (LlamaRMSNorm and its kin),
// weight * (x / sqrt(mean(x^2 over the last dimension) + eps)), computed in float32.
//
// A float32 input is one autograd node: LibTorch's _fused_rms_norm forward, which also returns
// the per-row 1/rms (the only thing kept besides the input), and a backward of a few passes over
// the input that computes only the gradients asked for (LoRA freezes the weight). The op-by-op
// formula's graph keeps more input-sized tensors and walks them about ten times backward. The
// numbers are the formula's up to rounding. Other dtypes take transformers' formula as it stands
// (upcast, normalise, cast back, then the weight). No double backward.
#pragma once

#include <torch/types.h>

namespace shardkit::nn {

/// RMSNorm of `x` over its last dimension, scaled by `weight` (shape: x's last dimension).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

}  // namespace shardkit::nn
