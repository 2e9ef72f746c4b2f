// LoRA on a policy: options, target matching and freezing, PEFT's adapter_config.json, merging.
#include "shardkit/peft.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/json_text.hpp"
#include "shardkit/nn/lora_linear.hpp"

namespace shardkit {

LoraTargetsPolicy::~LoraTargetsPolicy() = default;

namespace {

// PEFT's rule: a target matches a module whose name equals it or ends with "." + target.
bool matches(const std::string& name, const std::string& target) {
  if (name == target) return true;
  return name.size() > target.size() && name.compare(name.size() - target.size(), target.size(), target) == 0 &&
         name[name.size() - target.size() - 1] == '.';
}

bool matches_any(const std::string& name, const std::vector<std::string>& targets) {
  return std::any_of(targets.begin(), targets.end(), [&](const auto& t) { return matches(name, t); });
}

std::string last_component(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// "q_proj, k_proj, ..." (the distinct last components, in order) for messages.
std::string module_kinds(const std::vector<std::string>& names) {
  std::vector<std::string> kinds;
  for (const auto& n : names)
    if (const auto k = last_component(n); std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  std::string out;
  for (const auto& k : kinds) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string json_list(const std::vector<std::string>& items) {
  if (items.empty()) return "null";
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + ("\"" + json_escape(items[i]) + "\"");
  return out + "]";
}


}  // namespace

LoraOptions LoraOptions::from_config(const Config& config, const std::vector<std::string>& default_targets) {
  LoraOptions o;
  o.r = config.get_int("peft.r");
  o.lora_alpha = config.get_float("peft.lora_alpha");
  o.lora_dropout = config.get_float("peft.lora_dropout");
  o.target_modules = comma_list(config.get_string("peft.target_modules"));
  if (o.target_modules.empty()) o.target_modules = default_targets;
  if (o.target_modules.empty())
    throw ConfigError("--peft.target_modules is empty and policy '" + config.get_string("policy.type") +
                      "' has no default LoRA targets: name the modules to adapt, e.g. --peft.target_modules=q_proj,v_proj, "
                      "or --peft.target_modules=all-linear");
  o.full_training_modules = comma_list(config.get_string("peft.full_training_modules"));
  return o;
}

bool peft_enabled(const Config& config) {
  return config.has("peft.method_type") && !config.get_string("peft.method_type").empty();
}

LoraSummary apply_lora(torch::nn::Module& root, const LoraOptions& options) {
  std::vector<std::pair<std::string, std::shared_ptr<nn::LoraLinearImpl>>> capable;
  std::vector<std::string> all_modules;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    all_modules.push_back(item.key());
    if (auto linear = std::dynamic_pointer_cast<nn::LoraLinearImpl>(item.value()))
      capable.emplace_back(item.key(), linear);
  }
  std::vector<std::string> capable_names;
  for (const auto& [name, _] : capable) capable_names.push_back(name);
  const bool all_linear =
      options.target_modules.size() == 1 && options.target_modules.front() == "all-linear";

  LoraSummary summary;
  if (!all_linear) {
    for (const auto& target : options.target_modules) {
      if (std::any_of(capable_names.begin(), capable_names.end(), [&](const auto& n) { return matches(n, target); }))
        continue;
      const bool elsewhere = std::any_of(all_modules.begin(), all_modules.end(), [&](const auto& n) { return matches(n, target); });
      throw ConfigError("--peft.target_modules: '" + target + "' " +
                        (elsewhere ? std::string("names modules that cannot carry LoRA adapters")
                                   : std::string("matches no module of the policy")) +
                        "; the modules that can take adapters are " +
                        (capable_names.empty() ? std::string("none") : module_kinds(capable_names)) + " (" +
                        std::to_string(capable_names.size()) + " modules, e.g. " +
                        (capable_names.empty() ? std::string("-") : capable_names.front()) +
                        "), or --peft.target_modules=all-linear");
    }
  }
  for (const auto& target : options.full_training_modules)
    if (!std::any_of(all_modules.begin(), all_modules.end(), [&](const auto& n) { return matches(n, target); }))
      throw ConfigError("--peft.full_training_modules: '" + target + "' matches no module of the policy; its modules "
                        "are named " + module_kinds(all_modules));

  // Freeze everything, then open the adapters and the full-training modules.
  for (auto& p : root.parameters()) p.set_requires_grad(false);
  for (const auto& [name, linear] : capable) {
    const bool chosen = all_linear ? last_component(name) != "lm_head" : matches_any(name, options.target_modules);
    if (!chosen) continue;
    linear->enable_lora(options.r, options.lora_alpha, options.lora_dropout);
    summary.adapted.push_back(name);
    summary.adapter_parameters.insert(name + ".lora_A.weight");
    summary.adapter_parameters.insert(name + ".lora_B.weight");
  }
  for (const auto& item : root.named_modules("", /*include_self=*/false))
    if (matches_any(item.key(), options.full_training_modules))
      for (auto& p : item.value()->parameters()) p.set_requires_grad(true);
  for (const auto& item : root.named_parameters()) {
    summary.total_numel += item.value().numel();
    if (!item.value().requires_grad()) continue;
    summary.trainable.insert(item.key());
    summary.trainable_numel += item.value().numel();
  }
  return summary;
}

std::string adapter_config_json(const LoraOptions& o, const std::string& base_model_name_or_path) {
  // The field set of PEFT 0.21.2's LoraConfig.save_pretrained, keys sorted as PEFT writes them.
  return "{\n"
         "  \"alora_invocation_tokens\": null,\n"
         "  \"alpha_pattern\": {},\n"
         "  \"arrow_config\": null,\n"
         "  \"auto_mapping\": null,\n"
         "  \"base_model_name_or_path\": " +
         (base_model_name_or_path.empty() ? std::string("null") : "\"" + json_escape(base_model_name_or_path) + "\"") +
         ",\n"
         "  \"bias\": \"none\",\n"
         "  \"corda_config\": null,\n"
         "  \"ensure_weight_tying\": false,\n"
         "  \"eva_config\": null,\n"
         "  \"exclude_modules\": null,\n"
         "  \"fan_in_fan_out\": false,\n"
         "  \"inference_mode\": true,\n"
         "  \"init_lora_weights\": true,\n"
         "  \"kasa_config\": null,\n"
         "  \"layer_replication\": null,\n"
         "  \"layers_pattern\": null,\n"
         "  \"layers_to_transform\": null,\n"
         "  \"loftq_config\": {},\n"
         "  \"lora_alpha\": " + json_number(o.lora_alpha) + ",\n"
         "  \"lora_bias\": false,\n"
         "  \"lora_dropout\": " + json_number(o.lora_dropout) + ",\n"
         "  \"lora_ga_config\": null,\n"
         "  \"megatron_config\": null,\n"
         "  \"megatron_core\": \"megatron.core\",\n"
         "  \"modules_to_save\": " + json_list(o.full_training_modules) + ",\n"
         "  \"monteclora_config\": null,\n"
         "  \"peft_type\": \"LORA\",\n"
         "  \"peft_version\": \"0.21.2\",\n"
         "  \"qalora_group_size\": 16,\n"
         "  \"r\": " + std::to_string(o.r) + ",\n"
         "  \"rank_pattern\": {},\n"
         "  \"revision\": null,\n"
         "  \"target_modules\": " +
         (o.target_modules.size() == 1 && o.target_modules.front() == "all-linear" ? std::string("\"all-linear\"")
                                                                                    : json_list(o.target_modules)) +
         ",\n"
         "  \"target_parameters\": null,\n"
         "  \"task_type\": \"CAUSAL_LM\",\n"
         "  \"trainable_token_indices\": null,\n"
         "  \"use_bdlora\": null,\n"
         "  \"use_dora\": false,\n"
         "  \"use_qalora\": false,\n"
         "  \"use_rslora\": false,\n"
         "  \"velora_config\": null\n"
         "}\n";
}

void merge_lora_weights(std::map<std::string, at::Tensor>& tensors, double scaling) {
  const std::string a_suffix = ".lora_A.weight";
  std::vector<std::string> modules;
  for (const auto& [name, _] : tensors)
    if (name.size() > a_suffix.size() && name.compare(name.size() - a_suffix.size(), a_suffix.size(), a_suffix) == 0)
      modules.push_back(name.substr(0, name.size() - a_suffix.size()));
  for (const auto& m : modules) {
    const auto a = tensors.find(m + ".lora_A.weight"), b = tensors.find(m + ".lora_B.weight"),
               w = tensors.find(m + ".weight");
    if (b == tensors.end() || w == tensors.end())
      throw FormatError("merging LoRA adapters: " + m + " has lora_A but no " +
                        (b == tensors.end() ? "lora_B.weight" : "base weight"));
    const auto delta = at::matmul(b->second.to(at::kFloat), a->second.to(at::kFloat)) * scaling;
    w->second = (w->second.to(at::kFloat) + delta).to(w->second.scalar_type());
    tensors.erase(a);
    tensors.erase(b);
  }
}

}  // namespace shardkit
