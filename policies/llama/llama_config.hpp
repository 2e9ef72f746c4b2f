// Llama's configuration: transformers' LlamaConfig fields read from --policy.* and checked.
#pragma once

#include <cstdint>
#include <string>

#include <shardkit/options.hpp>
#include <shardkit/plugin.hpp>

namespace shardkit::llama {

/// Rotary embeddings: the base, and Llama 3's frequency scaling when `llama3` is set.
struct RopeConfig {
  double theta = 10000.0;
  bool llama3 = false;  ///< "rope_type": "llama3"; otherwise "default" (no scaling)
  double factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;
};

struct LlamaConfig {
  std::int64_t vocab_size = 256, hidden_size = 64, intermediate_size = 176, num_hidden_layers = 2;
  std::int64_t num_attention_heads = 4, num_key_value_heads = 4, head_dim = 16;  ///< resolved (never 0)
  std::int64_t max_position_embeddings = 2048;
  double initializer_range = 0.02, rms_norm_eps = 1e-6, attention_dropout = 0.0;
  RopeConfig rope;
  bool attention_bias = false, mlp_bias = false, tie_word_embeddings = false;
};

/// Reads and checks the options (ConfigError naming the option otherwise): head_dim and
/// num_key_value_heads resolved, rope_parameters (when given) or rope_theta + rope_scaling
/// parsed; rope types other than default and llama3 are refused.
LlamaConfig read_config(const Config& options);

}  // namespace shardkit::llama
