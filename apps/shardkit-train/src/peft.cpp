// LoRA on a policy: options, target matching and freezing, PEFT's adapter_config.json, merging.
#include "peft.hpp"

#include "shardkit/capability.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>

#include "shardkit/causal_lm.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/json_text.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/lora_targets.hpp"
#include "shardkit/nn/lora_capable.hpp"
#include "shardkit/policy.hpp"
#include "train_options.hpp"

namespace shardkit {

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

// Whether dotted `name` has the component `component` ("a.lora_A.weight" has "lora_A").
bool has_component(const std::string& name, const std::string& component) {
  return ("." + name + ".").find("." + component + ".") != std::string::npos;
}

// "q_proj, k_proj, ..." (the distinct last components, in order) for messages.
std::string module_kinds(const std::vector<std::string>& names) {
  std::vector<std::string> kinds;
  for (const auto& n : names)
    if (const auto k = last_component(n); std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
  return join_list(kinds, ", ");
}

std::string json_list(const std::vector<std::string>& items) {
  if (items.empty()) return "null";
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + ("\"" + json_escape(items[i]) + "\"");
  return out + "]";
}

// A module that can carry adapters, found under the root.
struct Capable {
  std::string name;
  std::shared_ptr<torch::nn::Module> module;
  std::shared_ptr<nn::LoraCapable> lora;
  /// Whether all-linear takes it: a Linear, not an attention (PEFT adapts torch's
  /// MultiheadAttention only when its module is named).
  bool is_linear() const { return lora->lora_is_linear(); }
  void enable(const LoraOptions& o) const { lora->enable_lora(o.r, o.lora_alpha, o.lora_dropout); }
};

// "the modules that can take adapters are ..." for the refusals.
std::string capable_text(const std::vector<std::string>& capable_names) {
  return "the modules that can take adapters are " +
         (capable_names.empty() ? std::string("none") : module_kinds(capable_names)) + " (" +
         std::to_string(capable_names.size()) + " modules, e.g. " +
         (capable_names.empty() ? std::string("-") : capable_names.front()) + "), or --peft.target_modules=all-linear";
}

}  // namespace

LoraOptions LoraOptions::from_config(const Config& config, const std::vector<std::string>& default_targets) {
  const auto options = train::TrainOptions::from(config);
  LoraOptions o;
  o.r = options.peft_r;
  o.lora_alpha = options.peft_lora_alpha;
  o.lora_dropout = options.peft_lora_dropout;
  o.target_modules = comma_list(options.peft_target_modules);
  if (o.target_modules.empty()) o.target_modules = default_targets;
  if (o.target_modules.empty())
    throw ConfigError("--peft.target_modules is empty and policy '" + options.policy_type +
                      "' has no default LoRA targets: name the modules to adapt, e.g. --peft.target_modules=q_proj,v_proj, "
                      "or --peft.target_modules=all-linear");
  o.full_training_modules = comma_list(options.peft_full_training_modules);
  return o;
}

LoraOptions LoraOptions::from_config(const Config& config, const Policy& policy) {
  const auto* targets = capability<LoraTargetsPolicy>(policy);
  auto o = from_config(config, targets ? targets->default_lora_targets() : std::vector<std::string>{});
  o.task_type = capability<CausalLanguageModel>(policy) != nullptr ? "CAUSAL_LM" : "";
  return o;
}

LoraSummary apply_lora(torch::nn::Module& root, const LoraOptions& options) {
  std::vector<Capable> capable;
  std::vector<std::string> all_modules, capable_names;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    all_modules.push_back(item.key());
    if (auto lora = std::dynamic_pointer_cast<nn::LoraCapable>(item.value())) {
      capable.push_back({item.key(), item.value(), std::move(lora)});
      capable_names.push_back(item.key());
    }
  }
  const bool all_linear =
      options.target_modules.size() == 1 && options.target_modules.front() == "all-linear";
  const auto targets_flag = "--peft.target_modules=" + join_list(options.target_modules, ",");

  // Every refusal comes before anything is changed.
  if (options.r < 1) throw ConfigError("--peft.r=" + std::to_string(options.r) + ": the LoRA rank must be at least 1");
  if (!all_linear) {
    std::vector<std::string> problems;
    std::string hint;  // the first a module gives for a target it holds a part of
    for (const auto& target : options.target_modules) {
      if (std::any_of(capable_names.begin(), capable_names.end(), [&](const auto& n) { return matches(n, target); }))
        continue;
      const bool elsewhere = std::any_of(all_modules.begin(), all_modules.end(), [&](const auto& n) { return matches(n, target); });
      problems.push_back("'" + target + "' " +
                         (elsewhere ? std::string("names modules that cannot carry LoRA adapters")
                                    : std::string("matches no module of the policy")));
      for (const auto& c : capable) {
        if (!hint.empty()) break;
        if (auto sentence = c.lora->lora_target_hint(target, c.name); !sentence.empty()) hint = ". " + sentence;
      }
    }
    if (!problems.empty())
      throw ConfigError(targets_flag + ": " + join_list(problems, ", ") + "; " + capable_text(capable_names) + hint);
  }
  for (const auto& target : options.full_training_modules)
    if (!std::any_of(all_modules.begin(), all_modules.end(), [&](const auto& n) { return matches(n, target); }))
      throw ConfigError("--peft.full_training_modules: '" + target + "' matches no module of the policy; its modules "
                        "are named " + module_kinds(all_modules));

  std::vector<const Capable*> chosen;
  for (const auto& c : capable)
    if (all_linear ? c.is_linear() && last_component(c.name) != "lm_head" : matches_any(c.name, options.target_modules))
      chosen.push_back(&c);
  bool full_training_parameters = false;
  for (const auto& item : root.named_modules("", /*include_self=*/false))
    if (matches_any(item.key(), options.full_training_modules) && !item.value()->parameters().empty())
      full_training_parameters = true;
  // Training nothing would fail at the first backward ("element 0 of tensors does not require grad").
  if (chosen.empty() && !full_training_parameters)
    throw ConfigError(targets_flag + ": LoRA would train 0 parameters: " +
                      (all_linear ? std::string("all-linear takes every LoRA-capable Linear but lm_head, and the policy "
                                                "has none (attention modules are adapted only when named)")
                                  : std::string("no module takes an adapter")) +
                      (options.full_training_modules.empty()
                           ? std::string()
                           : " and --peft.full_training_modules=" + join_list(options.full_training_modules, ",") +
                                 " holds no parameters") +
                      "; " + capable_text(capable_names));

  // Freeze everything, then open the adapters and the full-training modules.
  LoraSummary summary;
  for (auto& p : root.parameters()) p.set_requires_grad(false);
  for (const auto* c : chosen) {
    c->enable(options);
    summary.adapted.push_back(c->name);
    for (const auto& p : c->module->named_parameters(/*recurse=*/true))
      if (has_component(p.key(), "lora_A") || has_component(p.key(), "lora_B"))
        summary.adapter_parameters.insert(c->name + "." + p.key());
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

PeftSetup setup_peft(const Config& config, Policy& policy) {
  PeftSetup setup{LoraOptions::from_config(config, policy), {}};
  setup.summary = apply_lora(policy, setup.options);
  const auto& o = setup.options;
  const auto& summary = setup.summary;
  logger()->info("LoRA: {} trainable parameters of {} ({:.4f}%): r {}, lora_alpha {:g}, dropout {:g} on {} modules "
                 "({}){}", summary.trainable_numel, summary.total_numel,
                 100.0 * static_cast<double>(summary.trainable_numel) /
                     static_cast<double>(std::max<std::int64_t>(1, summary.total_numel)),
                 o.r, o.lora_alpha, o.lora_dropout, summary.adapted.size(), join_list(o.target_modules, ","),
                 o.full_training_modules.empty() ? "" : "; trained whole: " + join_list(o.full_training_modules, ","));
  return setup;
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
         "  \"task_type\": " +
         (o.task_type.empty() ? std::string("null") : "\"" + json_escape(o.task_type) + "\"") +
         ",\n"
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
    // PEFT's wrappers put "base_layer" into adapter names ("<attn>.base_layer.out_proj" adapts
    // "<attn>.out_proj"); the base weights never have it.
    std::string base = "." + m + ".";
    for (auto pos = base.find(".base_layer."); pos != std::string::npos; pos = base.find(".base_layer."))
      base.erase(pos, std::string(".base_layer").size());
    base = base.substr(1, base.size() - 2);
    const auto a = tensors.find(m + ".lora_A.weight"), b = tensors.find(m + ".lora_B.weight");
    auto w = tensors.find(base + ".weight");
    if (w == tensors.end()) w = tensors.find(base + ".in_proj_weight");  // an attention's packed q, k, v
    if (b == tensors.end() || w == tensors.end())
      throw FormatError("merging LoRA adapters: " + m + " has lora_A but no " +
                        (b == tensors.end() ? "lora_B.weight"
                                            : "base weight (" + base + ".weight or " + base + ".in_proj_weight)"));
    const auto delta = at::matmul(b->second.to(at::kFloat), a->second.to(at::kFloat)) * scaling;
    if (delta.sizes() != w->second.sizes())
      throw FormatError("merging LoRA adapters: " + m + "'s lora_B x lora_A is " + c10::str(delta.sizes()) + ", but " +
                        w->first + " is " + c10::str(w->second.sizes()));
    w->second = (w->second.to(at::kFloat) + delta).to(w->second.scalar_type());
    tensors.erase(a);
    tensors.erase(b);
  }
}

}  // namespace shardkit
