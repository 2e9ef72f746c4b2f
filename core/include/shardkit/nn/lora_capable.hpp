// A module that can carry PEFT's LoRA adapters: the interface through which a run with --peft.*
// options finds, under a policy, the modules it may adapt, whatever library defines them.
//
//   class MyLinearImpl : public torch::nn::Module, public shardkit::nn::LoraCapable {
//     bool lora_is_linear() const override { return true; }
//     void enable_lora(std::int64_t r, double alpha, double dropout) override;  // adds lora_A, lora_B
//   };
//
// The adapters are registered as submodules whose names hold a component "lora_A" or "lora_B"
// (PEFT's names in adapter_model.safetensors), and enable_lora() freezes the module's own weights.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit::nn {

class LoraCapable {
 public:
  virtual ~LoraCapable();
  /// Whether it is a linear map, which --peft.target_modules=all-linear adapts (PEFT adapts an
  /// attention module only when it is named).
  virtual bool lora_is_linear() const = 0;
  /// Adds adapters of rank `r` (scaling `alpha` / `r`; `dropout` on their input in training, where
  /// the module applies any) and freezes the module's own parameters. Throws ConfigError when
  /// r < 1, RuntimeError when called twice.
  virtual void enable_lora(std::int64_t r, double alpha, double dropout) = 0;
  /// A sentence for a user whose --peft.target_modules entry `target` matched no module although it
  /// names a part of this one that cannot be adapted alone ("q_proj" inside a packed attention), or
  /// "" (the default). `module_name` is this module's name under the policy.
  virtual std::string lora_target_hint(const std::string& target, const std::string& module_name) const;
};

}  // namespace shardkit::nn
