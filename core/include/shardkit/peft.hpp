// PEFT (LoRA) fine-tuning: options, putting adapters on a policy, and PEFT's file names and config.
//
// A run with --peft.* options trains LoRA adapters on a frozen pretrained base, as LeRobot's
// lerobot-train does with Hugging Face PEFT, and saves what `peft.PeftModel.from_pretrained`
// reads: adapter_model.safetensors (keys "base_model.model.<parameter name>") and
// adapter_config.json (PEFT 0.21's fields).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <ATen/Tensor.h>
#include <torch/nn/module.h>

#include "shardkit/config.hpp"

namespace shardkit {

/// What PEFT's LoraConfig says, under shardkit's option names (--peft.<field>).
struct LoraOptions {
  std::int64_t r = 16;          ///< rank of the adapters
  double lora_alpha = 8.0;      ///< scaling = lora_alpha / r (PEFT's default alpha is 8)
  double lora_dropout = 0.0;    ///< dropout on the adapters' input in training
  /// Module-name suffixes that get adapters ("q_proj" matches "model.layers.0.self_attn.q_proj"),
  /// or {"all-linear"}: every LoRA-capable linear except the output layer "lm_head", as PEFT.
  std::vector<std::string> target_modules;
  /// Module-name suffixes trained whole beside the adapters (PEFT's modules_to_save).
  std::vector<std::string> full_training_modules;

  /// From the run's --peft.* options; an empty --peft.target_modules takes `default_targets`
  /// (the policy's). Throws ConfigError when neither names a module.
  static LoraOptions from_config(const Config& config, const std::vector<std::string>& default_targets);
};

/// A policy that knows where LoRA adapters go by default (PEFT's per-architecture defaults,
/// e.g. {"q_proj", "v_proj"} for Llama), used when --peft.target_modules is not given.
class LoraTargetsPolicy {
 public:
  virtual ~LoraTargetsPolicy();
  virtual std::vector<std::string> default_lora_targets() const = 0;
};

/// What apply_lora() did.
struct LoraSummary {
  std::vector<std::string> adapted;     ///< modules that got adapters, in registration order
  std::set<std::string> adapter_parameters;  ///< "<module>.lora_A.weight", "<module>.lora_B.weight"
  std::set<std::string> trainable;      ///< every parameter left trainable (adapters + full-training modules)
  std::int64_t trainable_numel = 0;
  std::int64_t total_numel = 0;
};

/// Enables LoRA on every shardkit::nn::LoraLinear under `root` whose qualified name ends with
/// a target (a whole name component), and freezes every other parameter except those under
/// `full_training_modules`. Throws ConfigError naming the LoRA-capable modules when a target
/// matches none of them, and the modules when a full-training name matches nothing. Call it
/// before a backend lays the model out (frozen parameters get no gradients or optimizer state).
LoraSummary apply_lora(torch::nn::Module& root, const LoraOptions& options);

/// Whether the run trains PEFT adapters (--peft.method_type set; train_main sets it to LORA
/// when any --peft.* option is given).
bool peft_enabled(const Config& config);

/// The prefix PEFT's saved adapters put before a base model's parameter names.
inline constexpr const char* kPeftKeyPrefix = "base_model.model.";

/// adapter_config.json as PEFT 0.21's save_pretrained writes it, for adapters `options` on the
/// model at `base_model_name_or_path`, task CAUSAL_LM.
std::string adapter_config_json(const LoraOptions& options, const std::string& base_model_name_or_path);

/// Folds the adapters in `tensors` (full names, "<m>.lora_A.weight" and "<m>.lora_B.weight")
/// into their base weights, "<m>.weight" += (B A) * scaling, and removes them: the merged
/// full weights (PEFT's merge_and_unload).
void merge_lora_weights(std::map<std::string, at::Tensor>& tensors, double scaling);

}  // namespace shardkit
