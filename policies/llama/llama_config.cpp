// The options of the Llama-layout families read into LlamaConfig, with transformers' checks and defaults.
#include "llama_config.hpp"

#include <shardkit/config.hpp>
#include <shardkit/error.hpp>

#include <cctype>

namespace shardkit::llama {
namespace {

/// The largest original_max_position_embeddings of Llama 3's rope scaling (--policy.max_position_embeddings's).
constexpr std::int64_t kMaxOriginalPositions = 1073741824;

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
  // A count of positions, bounded as --policy.max_position_embeddings is: 1e300 would not convert.
  const auto original = number_of(fields, "original_max_position_embeddings", option, 0, true);
  if (!(original >= 1 && original <= static_cast<double>(kMaxOriginalPositions)))
    throw ConfigError("--policy." + option + ": \"original_max_position_embeddings\" is " + to_string(Value{original}) +
                      "; it must be a number of positions from 1 to " + std::to_string(kMaxOriginalPositions) +
                      " (Llama 3.1 has 8192)");
  rope.original_max_position_embeddings = static_cast<std::int64_t>(original);
  if (rope.high_freq_factor <= rope.low_freq_factor)
    throw ConfigError("--policy." + option + ": high_freq_factor must exceed low_freq_factor");
}

/// Which layers slide, as transformers decides: Mistral's all when sliding_window is set;
/// Qwen2/Qwen3's by layer_types, else from max_window_layers on, when use_sliding_window is on.
void resolve_sliding_layers(const Config& o, LlamaConfig& c) {
  c.sliding_layers.assign(static_cast<std::size_t>(c.num_hidden_layers), false);
  if (c.family == Family::Mistral) {
    c.sliding_window = o.get_int("sliding_window");
    if (c.sliding_window > 0) c.sliding_layers.assign(c.sliding_layers.size(), true);
    return;
  }
  if (c.family != Family::Qwen2 && c.family != Family::Qwen3) return;
  c.use_sliding_window = o.get_bool("use_sliding_window");
  c.max_window_layers = o.get_int("max_window_layers");
  c.sliding_window = c.use_sliding_window ? o.get_int("sliding_window") : 0;
  const auto types = o.get_string("layer_types");
  if (is_null(types)) {
    for (std::int64_t i = c.max_window_layers; i < c.num_hidden_layers && c.sliding_window > 0; ++i)
      c.sliding_layers[static_cast<std::size_t>(i)] = true;
    return;
  }
  // A JSON list of "full_attention" / "sliding_attention", one per layer.
  std::vector<std::string> list;
  for (std::size_t at = types.find('"'); at != std::string::npos; at = types.find('"', at + 1)) {
    const auto end = types.find('"', at + 1);
    if (end == std::string::npos) break;
    list.push_back(types.substr(at + 1, end - at - 1));
    at = end;
  }
  if (list.size() != c.sliding_layers.size())
    throw ConfigError("--policy.layer_types lists " + std::to_string(list.size()) + " layers; --policy.num_hidden_layers=" +
                      std::to_string(c.num_hidden_layers) + " needs one entry per layer");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] != "full_attention" && list[i] != "sliding_attention")
      throw ConfigError("--policy.layer_types: '" + list[i] + "' is neither full_attention nor sliding_attention");
    c.sliding_layers[i] = list[i] == "sliding_attention" && c.sliding_window > 0;
  }
}

}  // namespace

const FamilyNames& names_of(Family family) {
  static const FamilyNames names[] = {{"llama", "LlamaForCausalLM", "LlamaDecoderLayer"},
                                      {"mistral", "MistralForCausalLM", "MistralDecoderLayer"},
                                      {"qwen2", "Qwen2ForCausalLM", "Qwen2DecoderLayer"},
                                      {"qwen3", "Qwen3ForCausalLM", "Qwen3DecoderLayer"}};
  return names[static_cast<int>(family)];
}

std::string token_ids_json(const Config& options, const std::string& name) {
  const auto text = options.get_string(name);
  if (is_null(text)) return "null";
  for (const char c : text)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '[' || c == ']' || c == ',' || c == ' ' || c == '-'))
      throw ConfigError("--policy." + name + "=" + text + " is not null, a token id or a list of token ids");
  return text;
}

LlamaConfig read_config(const Config& o, Family family) {
  // Checked at start-up, not first when the first checkpoint's config.json is written.
  for (const char* name : {"bos_token_id", "eos_token_id", "pad_token_id"}) token_ids_json(o, name);
  LlamaConfig c;
  c.family = family;
  c.vocab_size = o.get_int("vocab_size");
  c.hidden_size = o.get_int("hidden_size");
  c.intermediate_size = o.get_int("intermediate_size");
  c.num_hidden_layers = o.get_int("num_hidden_layers");
  c.num_attention_heads = o.get_int("num_attention_heads");
  c.num_key_value_heads = o.get_int("num_key_value_heads");
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  c.head_dim = o.get_int("head_dim");
  if (c.head_dim == 0 && family == Family::Qwen3) c.head_dim = 128;  // Qwen3Config's default, not hidden / heads
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
  // Options a family's table has (Mistral and Qwen2 have no attention_bias; only Llama mlp_bias).
  if (o.has("attention_bias")) c.attention_bias = o.get_bool("attention_bias");
  if (o.has("mlp_bias")) c.mlp_bias = o.get_bool("mlp_bias");
  c.qkv_bias = c.attention_bias || family == Family::Qwen2;
  c.qk_norm = family == Family::Qwen3;
  c.tie_word_embeddings = o.get_bool("tie_word_embeddings");
  c.rope.theta = o.get_float("rope_theta");
  if (const auto p = o.get_string("rope_parameters"); !is_null(p)) parse_rope(p, "rope_parameters", c.rope);
  else if (const auto s = o.get_string("rope_scaling"); !is_null(s)) parse_rope(s, "rope_scaling", c.rope);
  resolve_sliding_layers(o, c);
  return c;
}

}  // namespace shardkit::llama
