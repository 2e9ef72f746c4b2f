// The config.json of a Llama-layout checkpoint in its family's transformers form (AutoModelForCausalLM reads it).
#pragma once

#include <string>

#include <shardkit/config.hpp>

#include "llama_config.hpp"

namespace shardkit::llama {

/// The family's config JSON: "architectures" (e.g. ["LlamaForCausalLM"]), "model_type",
/// "torch_dtype", every field of the family's config from `options` (the resolved --policy.*
/// options) with head_dim and num_key_value_heads resolved, rope_theta and rope_scaling (the
/// form Llama 3's folders use, which transformers 4 and 5 both read), the sliding window fields
/// of Mistral and Qwen (layer_types resolved). Floats are written as Python does (8.0).
std::string hf_config_json(const LlamaConfig& config, const Config& options, const std::string& torch_dtype);

}  // namespace shardkit::llama
