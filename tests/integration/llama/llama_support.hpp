// Shared pieces of the llama tests: transformers' tiny folders (llama_peer.py) and the Llama-layout
// policy plugins (llama, mistral, qwen2, qwen3).
#pragma once

#include <torch/torch.h>

#include <boost/json.hpp>

#include <filesystem>
#include <list>
#include <memory>
#include <set>
#include <string>

#include "shardkit/capability.hpp"
#include "shardkit/causal_lm.hpp"
#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/plugin.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"
#include "plugin_defaults.hpp"
#include "test_support.hpp"

namespace shardkit::test {

/// Runs llama_peer.py with `args`; fails the test (with its output) unless it succeeds.
inline std::string peer(const std::string& args) {
  const auto r = run_command(python() + " " + shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                                          "/tests/integration/llama/llama_peer.py") + " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

/// Runs tests/integration/lora/lora_peer.py (PEFT's side) with `args`; fails the test (with its
/// output) unless it succeeds.
inline std::string lora_peer(const std::string& args) {
  const auto r = run_command(python() + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/lora/lora_peer.py") +
                             " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

/// The llama plugin with llama_peer.py's sizes (`tied` or not) over the defaults, `overrides`
/// on top, and --policy.path=`path` (none when empty).
inline std::shared_ptr<Policy> make_llama(bool tied, const std::string& path,
                                          const std::map<std::string, Value>& overrides = {}) {
  static Registry registry;
  if (registry.find("policy", "llama") == nullptr)
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-policy-llama.so");
  auto ctx = context_with_defaults(registry, "policy", "llama");
  const std::map<std::string, Value> peer_sizes{
      {"vocab_size", std::int64_t{128}}, {"hidden_size", std::int64_t{32}}, {"intermediate_size", std::int64_t{64}},
      {"num_hidden_layers", std::int64_t{2}}, {"num_attention_heads", std::int64_t{4}},
      {"num_key_value_heads", std::int64_t{2}}, {"max_position_embeddings", std::int64_t{256}},
      {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}, {"tie_word_embeddings", tied},
      {"rope_scaling", std::string(R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, )"
                                   R"("high_freq_factor": 4.0, "original_max_position_embeddings": 64})")}};
  for (const auto& [key, value] : peer_sizes) ctx.options.set(key, value);
  for (const auto& [key, value] : overrides) ctx.options.set(key, value);
  static Config full;
  full.set("policy.path", path);
  ctx.full_config = &full;
  return registry.create_as<Policy>("policy", "llama", ctx);
}

/// The `type` policy plugin (llama, mistral, qwen2, qwen3) with --policy.path=`folder` and the
/// options of its config.json, as shardkit-train fills them: each field the plugin has an option
/// for, a null left at the default, lists and objects as their JSON text; `overrides` on top.
inline std::shared_ptr<Policy> make_family(const std::string& type, const std::string& folder,
                                           const std::map<std::string, Value>& overrides = {}) {
  static Registry registry;
  if (registry.find("policy", type) == nullptr)
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-policy-" + type + ".so");
  auto ctx = context_with_defaults(registry, "policy", type);
  const auto config = boost::json::parse(slurp(folder + "/config.json")).as_object();
  for (const auto& [key, v] : config) {
    const std::string name(key);
    if (!ctx.options.has(name) || v.is_null()) continue;
    // As the option's type: a String option takes any JSON as its text (token ids, layer_types).
    const auto& current = ctx.options.get(name);
    if (std::holds_alternative<std::string>(current))
      ctx.options.set(name, v.is_string() ? std::string(v.as_string()) : boost::json::serialize(v));
    else if (std::holds_alternative<double>(current)) ctx.options.set(name, v.to_number<double>());
    else if (std::holds_alternative<std::int64_t>(current)) ctx.options.set(name, v.to_number<std::int64_t>());
    else ctx.options.set(name, v.as_bool());
  }
  for (const auto& [key, value] : overrides) ctx.options.set(key, value);
  static std::list<Config> fulls;  // each policy's whole configuration outlives it
  auto& full = fulls.emplace_back();
  full.set("policy.path", folder);
  ctx.full_config = &full;
  return registry.create_as<Policy>("policy", type, ctx);
}

/// Names of the tensors in a folder (model.safetensors or the sharded index's files).
inline std::set<std::string> saved_names(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().extension() == ".safetensors") {
      const auto file = safetensors::File::open(e.path().string());
      for (const auto& name : file.names()) names.insert(name);
    }
  return names;
}

/// Every tensor of a safetensors file.
inline std::map<std::string, torch::Tensor> read_tensors(const std::string& path) {
  const auto file = safetensors::File::open(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& name : file.names()) out[name] = safetensors::to_tensor(file.get(name));
  return out;
}

/// shardkit's per-token logits for the batch in `reference` (llama_peer.py logits' output).
inline torch::Tensor shardkit_logits(Policy& policy, const std::map<std::string, torch::Tensor>& reference) {
  policy.eval();
  torch::NoGradGuard no_grad;
  auto* lm = shardkit::capability<CausalLanguageModel>(policy);
  REQUIRE(lm != nullptr);
  return lm->logits({{"input_ids", reference.at("input_ids")}, {"attention_mask", reference.at("attention_mask")}});
}

}  // namespace shardkit::test
