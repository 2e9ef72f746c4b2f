// transformers' config JSON for the checkpoints of the Llama-layout families.
#include "hf_config_json.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include <shardkit/error.hpp>

namespace shardkit::llama {
namespace {

std::string json_float(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  // The shortest text that reads back the same, then a float as Python writes it.
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::stod(text) == v) {
      s = text;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string rope_scaling_json(const RopeConfig& rope) {
  if (!rope.llama3) return "null";
  return "{\"rope_type\": \"llama3\", \"factor\": " + json_float(rope.factor) + ", \"low_freq_factor\": " +
         json_float(rope.low_freq_factor) + ", \"high_freq_factor\": " + json_float(rope.high_freq_factor) +
         ", \"original_max_position_embeddings\": " + std::to_string(rope.original_max_position_embeddings) + "}";
}

}  // namespace

std::string hf_config_json(const LlamaConfig& c, const Config& options, const std::string& torch_dtype) {
  const auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  const auto i = [](std::int64_t v) { return std::to_string(v); };
  const auto& names = names_of(c.family);
  std::vector<std::pair<std::string, std::string>> fields = {
      {"architectures", "[\"" + std::string(names.architecture) + "\"]"},
      {"model_type", "\"" + std::string(names.model_type) + "\""},
      {"attention_dropout", json_float(c.attention_dropout)},
      {"bos_token_id", token_ids_json(options, "bos_token_id")},
      {"eos_token_id", token_ids_json(options, "eos_token_id")},
      {"head_dim", i(c.head_dim)},
      {"hidden_act", "\"silu\""},
      {"hidden_size", i(c.hidden_size)},
      {"initializer_range", json_float(c.initializer_range)},
      {"intermediate_size", i(c.intermediate_size)},
      {"max_position_embeddings", i(c.max_position_embeddings)},
      {"num_attention_heads", i(c.num_attention_heads)},
      {"num_hidden_layers", i(c.num_hidden_layers)},
      {"num_key_value_heads", i(c.num_key_value_heads)},
      {"pad_token_id", token_ids_json(options, "pad_token_id")},
      {"rms_norm_eps", json_float(c.rms_norm_eps)},
      {"rope_scaling", rope_scaling_json(c.rope)},
      {"rope_theta", json_float(c.rope.theta)},
      {"tie_word_embeddings", b(c.tie_word_embeddings)},
      {"torch_dtype", "\"" + torch_dtype + "\""},
      {"use_cache", "true"},
      {"vocab_size", i(c.vocab_size)},
  };
  // Each family's own fields.
  const auto window = c.sliding_window > 0 ? i(c.sliding_window) : std::string("null");
  if (c.family == Family::Llama) {
    fields.push_back({"attention_bias", b(c.attention_bias)});
    fields.push_back({"mlp_bias", b(c.mlp_bias)});
    fields.push_back({"pretraining_tp", "1"});
  } else if (c.family == Family::Mistral) {
    fields.push_back({"sliding_window", window});
  } else {
    if (c.family == Family::Qwen3) fields.push_back({"attention_bias", b(c.attention_bias)});
    std::string types;
    for (const bool sliding : c.sliding_layers)
      types += std::string(types.empty() ? "" : ", ") + (sliding ? "\"sliding_attention\"" : "\"full_attention\"");
    fields.push_back({"layer_types", "[" + types + "]"});
    fields.push_back({"max_window_layers", i(c.max_window_layers)});
    fields.push_back({"sliding_window", window});
    fields.push_back({"use_sliding_window", b(c.use_sliding_window)});
  }
  std::sort(fields.begin() + 2, fields.end());  // architectures and model_type first, then by name
  std::string json = "{";
  for (std::size_t k = 0; k < fields.size(); ++k)
    json += std::string(k ? "," : "") + "\n  \"" + fields[k].first + "\": " + fields[k].second;
  return json + "\n}\n";
}

}  // namespace shardkit::llama
