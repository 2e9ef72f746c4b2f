// The config.json of a llama checkpoint in transformers' LlamaConfig form (AutoModelForCausalLM reads it).
#pragma once

#include <string>

#include <shardkit/config.hpp>

#include "llama_config.hpp"

namespace shardkit::llama {

/// LlamaConfig's JSON: "architectures": ["LlamaForCausalLM"], "model_type": "llama",
/// "torch_dtype", every LlamaConfig field of `options` (the resolved --policy.* options) with
/// head_dim and num_key_value_heads resolved, rope_theta and rope_scaling (the form Llama 3's
/// folders use, which transformers 4 and 5 both read). Floats are written as Python does (8.0).
std::string hf_config_json(const LlamaConfig& config, const Config& options, const std::string& torch_dtype);

}  // namespace shardkit::llama
