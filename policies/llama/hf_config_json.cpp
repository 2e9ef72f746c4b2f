// transformers' LlamaConfig JSON for llama checkpoints.
#include "hf_config_json.hpp"

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

/// A token id option: JSON null, an integer or a list of integers, written as given.
std::string token_ids(const Config& options, const std::string& name) {
  const auto text = options.get_string(name);
  if (text.empty() || text == "null" || text == "None") return "null";
  bool ok = true;
  for (const char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '[' || c == ']' || c == ',' || c == ' ' || c == '-'))
      ok = false;
  if (!ok) throw ConfigError("--policy." + name + "=" + text + " is not null, a token id or a list of token ids");
  return text;
}

}  // namespace

std::string hf_config_json(const LlamaConfig& c, const Config& options, const std::string& torch_dtype) {
  const auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  const auto i = [](std::int64_t v) { return std::to_string(v); };
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"architectures", "[\"LlamaForCausalLM\"]"},
      {"model_type", "\"llama\""},
      {"attention_bias", b(c.attention_bias)},
      {"attention_dropout", json_float(c.attention_dropout)},
      {"bos_token_id", token_ids(options, "bos_token_id")},
      {"eos_token_id", token_ids(options, "eos_token_id")},
      {"head_dim", i(c.head_dim)},
      {"hidden_act", "\"silu\""},
      {"hidden_size", i(c.hidden_size)},
      {"initializer_range", json_float(c.initializer_range)},
      {"intermediate_size", i(c.intermediate_size)},
      {"max_position_embeddings", i(c.max_position_embeddings)},
      {"mlp_bias", b(c.mlp_bias)},
      {"num_attention_heads", i(c.num_attention_heads)},
      {"num_hidden_layers", i(c.num_hidden_layers)},
      {"num_key_value_heads", i(c.num_key_value_heads)},
      {"pad_token_id", token_ids(options, "pad_token_id")},
      {"pretraining_tp", "1"},
      {"rms_norm_eps", json_float(c.rms_norm_eps)},
      {"rope_scaling", rope_scaling_json(c.rope)},
      {"rope_theta", json_float(c.rope.theta)},
      {"tie_word_embeddings", b(c.tie_word_embeddings)},
      {"torch_dtype", "\"" + torch_dtype + "\""},
      {"use_cache", "true"},
      {"vocab_size", i(c.vocab_size)},
  };
  std::string json = "{";
  for (std::size_t k = 0; k < fields.size(); ++k)
    json += std::string(k ? "," : "") + "\n  \"" + fields[k].first + "\": " + fields[k].second;
  return json + "\n}\n";
}

}  // namespace shardkit::llama
