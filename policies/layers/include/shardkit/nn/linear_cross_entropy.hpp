// shardkit::nn::linear_cross_entropy: a causal LM's output layer and token cross-entropy in one
// pass over chunks of rows, without the (tokens x vocabulary) logits.
//
// The logits of a step are its largest tensors (1,020 x 32,000 fp32 is 131 MB for a 75 M Llama
// at batch 4 x 256; 16 K tokens x 128 K vocabulary is 8.4 GB): the unfused path makes them, their
// log-softmax and their gradient, whole. Here each chunk of rows computes its logits, turns them
// into their log-softmax in their own buffer, takes the loss (minus the target's
// log-probability) and, when gradients are wanted, the gradient at once (softmax minus one-hot,
// in place), turned straight into the hidden states' gradient and added into the output
// weight's: forward stores those two, backward scales them. Only one chunk's logits exist at a
// time; the numbers are cross_entropy(hidden @ weight^T, reduction sum)'s up to rounding.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace shardkit::nn {

/// Whether linear_cross_entropy computes what the unfused path would for these tensors: the
/// same dtype and device on both, and autocast off (autocast's casts belong to the unfused path).
bool linear_cross_entropy_applies(const torch::Tensor& hidden, const torch::Tensor& weight);

/// sum over rows i with targets[i] != ignore_index of -log softmax(hidden[i] @ weight^T)[targets[i]],
/// in float32 (a 0-dim tensor). hidden (N, H), weight (V, H) (no bias), targets (N,) int64.
/// Differentiable in hidden and weight; gradients are computed in the forward pass, only for
/// those that require them. `max_chunk_rows` > 0 caps the rows per chunk (else: by size).
torch::Tensor linear_cross_entropy(const torch::Tensor& hidden, const torch::Tensor& weight,
                                   const torch::Tensor& targets, std::int64_t ignore_index,
                                   std::int64_t max_chunk_rows = 0);

}  // namespace shardkit::nn
