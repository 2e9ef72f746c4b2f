// An optional capability of a Policy: its own optimizer settings, as LeRobot's training presets.
//
// A policy that trains best with its own learning rate, weight decay or a separate learning rate
// for some of its parameters offers this capability (the act policy: LeRobot's optimizer_lr,
// optimizer_weight_decay and optimizer_lr_backbone for `model.backbone.*`):
//
//   class MyPolicy : public shardkit::WithCapabilities<shardkit::Policy, shardkit::OptimizerPresetPolicy> {
//     shardkit::OptimizerPreset optimizer_preset() const override {
//       return {1e-5, 1e-4, {{"model.backbone.", 1e-5}}};
//     }
//   };
//
// `--optimizer.lr` / `--optimizer.weight_decay`, when given, win over the preset (as
// lerobot-train's flags win over a policy's preset); a group keeps its own learning rate either
// way, and the scheduler scales every group alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardkit {

/// Parameters whose names start with `prefix` step with learning rate `lr`.
struct LearningRateGroup {
  std::string prefix;  ///< e.g. "model.backbone."
  double lr = 0;       ///< peak learning rate of the group
};

/// What a policy asks of the optimizer; unset fields leave the run's options as they are.
struct OptimizerPreset {
  std::optional<double> lr;            ///< peak learning rate unless --optimizer.lr is given
  std::optional<double> weight_decay;  ///< unless --optimizer.weight_decay is given
  std::vector<LearningRateGroup> groups;  ///< parameters with a learning rate of their own (default none)
};

class OptimizerPresetPolicy {
 public:
  static constexpr const char* kCapabilityName = "optimizer_preset";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~OptimizerPresetPolicy();
  /// Asked once, after construction, before the optimizer is built.
  virtual OptimizerPreset optimizer_preset() const = 0;
};

}  // namespace shardkit
