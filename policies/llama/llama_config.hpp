// The configuration of Llama and the families built on its layout (Mistral, Qwen2, Qwen3):
// transformers' config fields read from --policy.* and checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// The transformers model families computed on Llama's layout, and what sets each apart.
enum class Family {
  Llama,    ///< LlamaForCausalLM
  Mistral,  ///< MistralForCausalLM: a sliding attention window (sliding_window) in every layer
  Qwen2,    ///< Qwen2ForCausalLM: biases on q/k/v_proj (not o_proj); sliding layers by layer_types
  Qwen3,    ///< Qwen3ForCausalLM: RMSNorm of each query and key head (q_norm, k_norm); layer_types
};

/// A family's names in transformers.
struct FamilyNames {
  const char* model_type;     ///< config.json's "model_type" (and the policy's name)
  const char* architecture;   ///< config.json's "architectures" entry
  const char* decoder_layer;  ///< the decoder layer's class name: the wrap unit
};
const FamilyNames& names_of(Family family);

struct LlamaConfig {
  Family family = Family::Llama;
  std::int64_t vocab_size = 256, hidden_size = 64, intermediate_size = 176, num_hidden_layers = 2;
  std::int64_t num_attention_heads = 4, num_key_value_heads = 4, head_dim = 16;  ///< resolved (never 0)
  std::int64_t max_position_embeddings = 2048;
  double initializer_range = 0.02, rms_norm_eps = 1e-6, attention_dropout = 0.0;
  RopeConfig rope;
  bool attention_bias = false, mlp_bias = false, tie_word_embeddings = false;
  bool qkv_bias = false;  ///< biases on q_proj, k_proj, v_proj (attention_bias puts them on o_proj too)
  bool qk_norm = false;   ///< Qwen3's q_norm and k_norm
  /// Keys a query may see, counting itself, in the layers marked in `sliding_layers` (0: none).
  std::int64_t sliding_window = 0;
  std::vector<bool> sliding_layers;  ///< per layer: whether it attends within sliding_window only
  bool use_sliding_window = false;   ///< Qwen2/Qwen3's switch (recorded in config.json)
  std::int64_t max_window_layers = 28;  ///< Qwen2/Qwen3: layers from this one on slide (without layer_types)
};

/// Reads and checks the options of `family`'s table (ConfigError naming the option otherwise):
/// head_dim and num_key_value_heads resolved, rope_parameters (when given) or rope_theta +
/// rope_scaling parsed (rope types other than default and llama3 refused), the sliding layers
/// resolved as transformers resolves them.
LlamaConfig read_config(const Config& options, Family family);

/// Token id option `name` (bos_token_id, eos_token_id, pad_token_id) as config.json writes it:
/// null, an integer or a list of integers, as given; anything else is a ConfigError naming it.
std::string token_ids_json(const Config& options, const std::string& name);

}  // namespace shardkit::llama
