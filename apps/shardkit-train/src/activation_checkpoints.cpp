// --accelerator.activation_checkpointing: which of a policy's wrap units keep only their inputs.
#include "activation_checkpoints.hpp"

#include <spdlog/logger.h>

#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"
#include "shardkit/nn/activation_checkpointing.hpp"
#include "shardkit/nn/block.hpp"
#include "shardkit/policy.hpp"

namespace shardkit::train {

CheckpointingChoice checkpointing_choice(const Config& config, const std::string& backend, const Policy& policy,
                                         const std::string& policy_name) {
  const std::string kMode = "accelerator.activation_checkpointing.mode";
  CheckpointingChoice choice;
  choice.mode = nn::parse_checkpointing_mode(config.get_string(kMode), "--" + kMode);
  choice.every = config.get_int("accelerator.activation_checkpointing.every");
  const auto wrap_key = "accelerator." + backend + ".wrap_modules";
  if (config.has(wrap_key)) choice.classes = class_name_list(config.get_string(wrap_key), "--" + wrap_key);
  choice.source = "--" + wrap_key;
  if (choice.classes.empty()) {
    choice.classes = policy.wrap_modules();
    choice.source = "the wrap_modules() of policy '" + policy_name + "'";
  }
  return choice;
}

std::vector<std::string> setup_activation_checkpointing(const Config& config, const std::string& backend,
                                                        Policy& policy, const std::string& policy_name,
                                                        spdlog::logger* log) {
  const auto [mode, every, classes, source] = checkpointing_choice(config, backend, policy, policy_name);
  const auto wrap_key = "accelerator." + backend + ".wrap_modules";
  const std::string kMode = "accelerator.activation_checkpointing.mode";
  const auto names = nn::checkpoint_blocks(policy, classes, mode, every);
  if (mode == nn::CheckpointingMode::None) return names;
  if (names.empty()) {
    const auto units = classes.empty() ? 0 : nn::outermost_blocks(nn::find_blocks(policy, classes)).size();
    if (units > 0)
      throw ConfigError("--" + kMode + "=selective with --accelerator.activation_checkpointing.every=" +
                        std::to_string(every) + " checkpoints none of the " + std::to_string(units) +
                        " wrap units of " + source + ": give every at most " + std::to_string(units));
    throw ConfigError("--" + kMode + "=" + nn::checkpointing_mode_name(mode) + " found no wrap unit to checkpoint: " +
                      source + " names " + (classes.empty() ? "no class" : join_list(classes, ", ") + ", which no block of the policy is") +
                      "; name the block classes with --" + wrap_key + ", or leave the mode at none");
  }
  if (log != nullptr)
    log->info("activation checkpointing ({}{}): {} of the wrap units of {} ({}) keep only their inputs and run "
              "forward again in backward: {}",
              nn::checkpointing_mode_name(mode),
              mode == nn::CheckpointingMode::Selective ? ", every " + std::to_string(every) : std::string(),
              names.size(), source, join_list(classes, ", "), join_list(names, ", "));
  return names;
}

}  // namespace shardkit::train
