// PEFT (LoRA) fine-tuning: options, putting adapters on a policy, and PEFT's file names and config.
//
// A run with --peft.* options trains LoRA adapters on a frozen pretrained base, as LeRobot's
// lerobot-train does with Hugging Face PEFT, and saves what `peft.PeftModel.from_pretrained`
// reads: adapter_model.safetensors (keys "base_model.model.<parameter name>") and
// adapter_config.json (PEFT 0.21's fields). Adapters go on the policy's LoRA-capable
// modules, those that are shardkit::nn::LoraCapable (shardkit/nn/lora_capable.hpp): the
// policies' LoraLinear, and their MultiheadAttention as a whole (its packed q, k, v in-projection
// and its out_proj, as PEFT's lora.MultiheadAttention). The part of the trainer that wraps a
// policy for PEFT.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include "shardkit/config.hpp"
#include "shardkit/lora_targets.hpp"  // peft_enabled

namespace shardkit {

class Policy;

/// What PEFT's LoraConfig says, under shardkit's option names (--peft.<field>).
struct LoraOptions {
  std::int64_t r = 16;          ///< rank of the adapters
  double lora_alpha = 8.0;      ///< scaling = lora_alpha / r (PEFT's default alpha is 8)
  double lora_dropout = 0.0;    ///< dropout on the adapters' input in training
  /// Module-name suffixes that get adapters ("q_proj" matches "model.layers.0.self_attn.q_proj"),
  /// or {"all-linear"}: every LoRA-capable Linear except the output layer "lm_head", as PEFT
  /// (attention modules are adapted only when named, as PEFT adapts torch's MultiheadAttention).
  std::vector<std::string> target_modules;
  /// Module-name suffixes trained whole beside the adapters (PEFT's modules_to_save).
  std::vector<std::string> full_training_modules;
  /// PEFT's task_type in adapter_config.json: "CAUSAL_LM" (the default; PEFT's loader then
  /// wraps the base in PeftModelForCausalLM), or "" for null, what LeRobot writes for its
  /// policies (a plain PeftModel: PeftModelForCausalLM needs generation methods a policy lacks).
  std::string task_type = "CAUSAL_LM";

  /// From the run's --peft.* options; an empty --peft.target_modules takes `default_targets`
  /// (the policy's). Throws ConfigError when neither names a module. task_type stays CAUSAL_LM.
  static LoraOptions from_config(const Config& config, const std::vector<std::string>& default_targets);
  /// As above with `policy`'s default targets (a LoraTargetsPolicy's, else none) and task type:
  /// CAUSAL_LM for a CausalLanguageModel, null for any other policy.
  static LoraOptions from_config(const Config& config, const Policy& policy);
};

/// What apply_lora() did.
struct LoraSummary {
  std::vector<std::string> adapted;     ///< modules that got adapters, in registration order
  /// Every adapter parameter: "<module>.lora_A.weight", "<module>.lora_B.weight" (and for an
  /// attention module also "<module>.base_layer.out_proj.lora_A.weight" and lora_B's)
  std::set<std::string> adapter_parameters;
  std::set<std::string> trainable;      ///< every parameter left trainable (adapters + full-training modules)
  std::int64_t trainable_numel = 0;
  std::int64_t total_numel = 0;
};

/// Enables LoRA on every nn::LoraCapable module under `root` whose qualified name ends with
/// a target (a whole name component), and freezes every other parameter except those under
/// `full_training_modules`. Throws ConfigError, changing nothing, naming the LoRA-capable modules
/// when a target matches none of them (every such target at once), naming the modules when a
/// full-training name matches nothing, and naming the targets when nothing would be trained
/// (all-linear on a policy without a LoRA-capable Linear). Call it before a backend lays the
/// model out (frozen parameters get no gradients or optimizer state).
LoraSummary apply_lora(torch::nn::Module& root, const LoraOptions& options);

/// A PEFT run's adapters on its policy: what the options asked and what apply_lora() did.
struct PeftSetup {
  LoraOptions options;
  LoraSummary summary;
};

/// The trainer's PEFT component: --peft.* options (with `policy`'s default targets and task
/// type) applied to `policy` by apply_lora(), and logged with the counts of what is trained.
/// Call it before a backend lays the model out.
PeftSetup setup_peft(const Config& config, Policy& policy);

/// adapter_config.json as PEFT 0.21's save_pretrained writes it, for adapters `options` on the
/// model at `base_model_name_or_path`, with `options.task_type`.
std::string adapter_config_json(const LoraOptions& options, const std::string& base_model_name_or_path);

/// Folds the adapters in `tensors` (full names, "<m>.lora_A.weight" and "<m>.lora_B.weight")
/// into their base weights, "<m>.weight" += (B A) * scaling, and removes them: the merged
/// full weights (PEFT's merge_and_unload). An attention module's adapters fold into its packed
/// "<m>.in_proj_weight", and "<attn>.base_layer.out_proj"'s into "<attn>.out_proj.weight" (PEFT's
/// "base_layer" is not part of the base names). Throws FormatError for an adapter without its
/// B, without a base weight, or whose B A has another shape than the base weight.
void merge_lora_weights(std::map<std::string, at::Tensor>& tensors, double scaling);

}  // namespace shardkit
