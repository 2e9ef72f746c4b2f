// Rotary position embeddings as transformers' Llama computes them: default and Llama 3 frequencies.
#pragma once

#include <torch/torch.h>

#include <utility>

#include "llama_config.hpp"

namespace shardkit::llama {

/// The inverse frequencies (head_dim / 2) in fp32: 1 / theta^(2i / head_dim), then, for
/// rope_type llama3, divided by `factor` at long wavelengths and smoothly interpolated between
/// low_freq_factor and high_freq_factor (transformers' _compute_llama3_parameters).
torch::Tensor inverse_frequencies(const LlamaConfig& config);

/// cos and sin (seq_len, head_dim) for positions 0..seq_len-1, computed in fp32 and cast to `dtype`.
std::pair<torch::Tensor, torch::Tensor> rotary_tables(const torch::Tensor& inv_freq, std::int64_t seq_len,
                                                      torch::ScalarType dtype, torch::Device device);

}  // namespace shardkit::llama
