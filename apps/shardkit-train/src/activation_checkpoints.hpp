// --accelerator.activation_checkpointing: which of a policy's wrap units keep only their inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/nn/activation_checkpointing.hpp"

namespace spdlog {
class logger;
}

namespace shardkit {
class Policy;
}

namespace shardkit::train {

/// What --accelerator.activation_checkpointing asks of a policy: the mode, every k-th unit, and
/// the classes of the units (those of --accelerator.<backend>.wrap_modules when given, else the
/// policy's wrap_modules()), with where they came from for messages.
struct CheckpointingChoice {
  nn::CheckpointingMode mode = nn::CheckpointingMode::None;
  std::int64_t every = 2;
  std::vector<std::string> classes;
  std::string source;
};
CheckpointingChoice checkpointing_choice(const Config& config, const std::string& backend, const Policy& policy,
                                         const std::string& policy_name);

/// Turns activation checkpointing on for the wrap units --accelerator.activation_checkpointing
/// asks for: the outermost blocks of the classes of --accelerator.<backend>.wrap_modules when
/// given, else of the policy's wrap_modules(). Says which on `log` (nullptr: quiet). Returns
/// their names. Throws ConfigError when a mode other than none finds no unit.
std::vector<std::string> setup_activation_checkpointing(const Config& config, const std::string& backend,
                                                        Policy& policy, const std::string& policy_name,
                                                        spdlog::logger* log);

}  // namespace shardkit::train
