// An optional capability of a Policy: the config.json of its checkpoints in another tool's form.
//
// By default a checkpoint's pretrained_model/config.json holds the policy's options as shardkit
// resolved them. A policy that another tool should load offers this capability and writes that
// tool's form instead (the act policy writes LeRobot's ACTConfig JSON):
//
//   class MyPolicy : public shardkit::WithCapabilities<shardkit::Policy, shardkit::PretrainedConfigWriter> {
//     std::string pretrained_config_json() const override { return "{\"type\": \"my\", ...}"; }
//   };
//
// shardkit's --policy.path reads it back: keys that name the policy's options fill them; LeRobot's
// PreTrainedConfig fields that shardkit has no option for (input_features, device, ...) are skipped.
#pragma once

#include <cstdint>
#include <string>

namespace shardkit {

class PretrainedConfigWriter {
 public:
  static constexpr const char* kCapabilityName = "pretrained_config";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~PretrainedConfigWriter();
  /// The whole text of pretrained_model/config.json.
  virtual std::string pretrained_config_json() const = 0;
};

}  // namespace shardkit
