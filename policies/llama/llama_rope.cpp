// Rotary position embeddings (default and Llama 3 frequency scaling), in fp32 as transformers does.
#include "llama_rope.hpp"

#include <cmath>

namespace shardkit::llama {

torch::Tensor inverse_frequencies(const LlamaConfig& config) {
  const auto dim = config.head_dim;
  const auto exponents = torch::arange(0, dim, 2, torch::kLong).to(torch::kFloat32) / static_cast<double>(dim);
  auto inv_freq = 1.0 / torch::pow(config.rope.theta, exponents);
  if (!config.rope.llama3) return inv_freq;
  const auto& r = config.rope;
  const double old_context = static_cast<double>(r.original_max_position_embeddings);
  const double low_freq_wavelen = old_context / r.low_freq_factor;
  const double high_freq_wavelen = old_context / r.high_freq_factor;
  const auto wavelen = 2 * M_PI / inv_freq;
  auto scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / r.factor, inv_freq);
  const auto smooth = (old_context / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  const auto smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const auto medium = (wavelen < high_freq_wavelen).logical_not() & (wavelen > low_freq_wavelen).logical_not();
  return torch::where(medium, smoothed, scaled);
}

std::pair<torch::Tensor, torch::Tensor> rotary_tables(const torch::Tensor& inv_freq, std::int64_t seq_len,
                                                      torch::ScalarType dtype, torch::Device device) {
  const auto positions = torch::arange(seq_len, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  const auto freqs = positions.unsqueeze(-1) * inv_freq.to(device).unsqueeze(0);
  const auto emb = torch::cat({freqs, freqs}, -1);
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

}  // namespace shardkit::llama
