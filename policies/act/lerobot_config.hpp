// The config.json of an act checkpoint in LeRobot's ACTConfig form, which LeRobot's
// ACTPolicy.from_pretrained() reads (and which shardkit's --policy.path reads back).
#pragma once

#include <string>

#include <shardkit/config.hpp>

#include "act_config.hpp"

namespace shardkit::act {

/// LeRobot 0.6.1's ACTConfig JSON: "type": "act", its PreTrainedConfig fields (input and output
/// features with LeRobot's types and shapes, device, ...), then every ACT option of `options`
/// (the policy's resolved options) under its LeRobot name.
std::string lerobot_config_json(const ActConfig& config, const Config& options);

}  // namespace shardkit::act
