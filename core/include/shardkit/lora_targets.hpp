// Optional capability of a Policy: where PEFT's LoRA adapters go by default; and whether a run trains them.
//
//   class MyPolicy : public shardkit::WithCapabilities<shardkit::Policy, shardkit::LoraTargetsPolicy> {
//     std::vector<std::string> default_lora_targets() const override { return {"q_proj", "v_proj"}; }
//   };
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardkit {

class Config;

/// A policy that knows where LoRA adapters go by default (PEFT's per-architecture defaults,
/// e.g. {"q_proj", "v_proj"} for Llama; for a LeRobot policy, as LeRobot's
/// _get_default_peft_targets: the attention that predicts actions and the state and action
/// projections), used when --peft.target_modules is not given. The modules named must be
/// shardkit::nn::LoraCapable (shardkit/nn/lora_capable.hpp).
class LoraTargetsPolicy {
 public:
  static constexpr const char* kCapabilityName = "lora_targets";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~LoraTargetsPolicy();
  virtual std::vector<std::string> default_lora_targets() const = 0;
};

/// Whether the run trains PEFT adapters (--peft.method_type set; shardkit-train sets it to LORA
/// when any --peft.* option is given): a policy then holds a frozen base under its adapters.
bool peft_enabled(const Config& config);

}  // namespace shardkit
