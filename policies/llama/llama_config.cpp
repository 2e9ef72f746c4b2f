// Llama's options read into LlamaConfig, with transformers' checks and defaults.
#include "llama_config.hpp"

#include <shardkit/config.hpp>
#include <shardkit/error.hpp>

namespace shardkit::llama {
namespace {

bool is_null(const std::string& text) { return text.empty() || text == "null" || text == "None"; }

double number_of(const RawConfig& fields, const std::string& key, const std::string& option, double fallback,
                 bool required) {
  const auto it = fields.find(key);
  if (it == fields.end()) {
    if (required)
      throw ConfigError("--policy." + option + " of rope_type llama3 needs \"" + key + "\" (Llama 3.1 has factor 8.0, "
                        "low_freq_factor 1.0, high_freq_factor 4.0, original_max_position_embeddings 8192)");
    return fallback;
  }
  if (const auto* d = std::get_if<double>(&it->second.value)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&it->second.value)) return static_cast<double>(*i);
  throw ConfigError("--policy." + option + ": \"" + key + "\" is not a number");
}

/// Parses rope_scaling or rope_parameters JSON into `rope` (rope_theta only from the latter).
void parse_rope(const std::string& text, const std::string& option, RopeConfig& rope) {
  RawConfig fields;
  try {
    fields = Config::from_json_text(text, "--policy." + option);
  } catch (const Error& e) {
    throw ConfigError("--policy." + option + " is not a JSON object: " + e.what());
  }
  std::string type = "default";
  for (const auto* key : {"rope_type", "type"})  // "type" is the older spelling
    if (const auto it = fields.find(key); it != fields.end()) {
      if (const auto* s = std::get_if<std::string>(&it->second.value)) type = *s;
      break;
    }
  if (option == "rope_parameters") rope.theta = number_of(fields, "rope_theta", option, rope.theta, false);
  if (type == "default") return;
  if (type != "llama3")
    throw ConfigError("--policy." + option + ": rope_type '" + type + "' is not implemented by the llama policy "
                      "(it computes \"default\" and Llama 3's \"llama3\")");
  rope.llama3 = true;
  rope.factor = number_of(fields, "factor", option, 0, true);
  rope.low_freq_factor = number_of(fields, "low_freq_factor", option, 0, true);
  rope.high_freq_factor = number_of(fields, "high_freq_factor", option, 0, true);
  rope.original_max_position_embeddings =
      static_cast<std::int64_t>(number_of(fields, "original_max_position_embeddings", option, 0, true));
  if (rope.high_freq_factor <= rope.low_freq_factor)
    throw ConfigError("--policy." + option + ": high_freq_factor must exceed low_freq_factor");
}

}  // namespace

LlamaConfig read_config(const Config& o) {
  LlamaConfig c;
  c.vocab_size = o.get_int("vocab_size");
  c.hidden_size = o.get_int("hidden_size");
  c.intermediate_size = o.get_int("intermediate_size");
  c.num_hidden_layers = o.get_int("num_hidden_layers");
  c.num_attention_heads = o.get_int("num_attention_heads");
  c.num_key_value_heads = o.get_int("num_key_value_heads");
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  c.head_dim = o.get_int("head_dim");
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw ConfigError("--policy.hidden_size=" + std::to_string(c.hidden_size) + " is not a multiple of "
                        "--policy.num_attention_heads=" + std::to_string(c.num_attention_heads) +
                        "; change one, or give --policy.head_dim");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0)
    throw ConfigError("--policy.head_dim=" + std::to_string(c.head_dim) + " must be even (rotary embeddings "
                      "rotate pairs of dimensions)");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw ConfigError("--policy.num_key_value_heads=" + std::to_string(c.num_key_value_heads) +
                      " does not divide --policy.num_attention_heads=" + std::to_string(c.num_attention_heads));
  c.max_position_embeddings = o.get_int("max_position_embeddings");
  c.initializer_range = o.get_float("initializer_range");
  c.rms_norm_eps = o.get_float("rms_norm_eps");
  c.attention_dropout = o.get_float("attention_dropout");
  c.attention_bias = o.get_bool("attention_bias");
  c.mlp_bias = o.get_bool("mlp_bias");
  c.tie_word_embeddings = o.get_bool("tie_word_embeddings");
  c.rope.theta = o.get_float("rope_theta");
  if (const auto p = o.get_string("rope_parameters"); !is_null(p)) parse_rope(p, "rope_parameters", c.rope);
  else if (const auto s = o.get_string("rope_scaling"); !is_null(s)) parse_rope(s, "rope_scaling", c.rope);
  return c;
}

}  // namespace shardkit::llama
