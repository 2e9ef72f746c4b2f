// LeRobot command lines copied over: habit flags that turn off what shardkit lacks, and their errors.
#pragma once

#include <string>
#include <vector>

#include "config_provenance.hpp"
#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::train {

/// Before resolution: --dataset.repo_id for a dataset that has no such option (the default
/// synthetic one, or any but lerobot) is taken out of `flags` and `file` and explained in
/// `errors`: which dataset plugins exist, and how to select or add one.
void check_dataset_repo_id(RawConfig& flags, RawConfig& file, const Registry& registry,
                           const std::string& dataset, std::vector<std::string>& errors);

/// After resolution, LeRobot's flags: --wandb.enable, --policy.push_to_hub and --eval_freq
/// given with their off value are accepted with a line in `notices` saying why they change
/// nothing; asking for what does not exist (wandb, hub upload, evaluation) goes to `errors`.
/// --num_workers=N sets --dataset.num_workers when the selected dataset has that option and it
/// was not given itself (recorded in `provenance`), else it is ignored with a notice.
void apply_lerobot_flags(Config& config, Provenance& provenance, std::vector<std::string>& errors,
                         std::vector<std::string>& notices);

/// After resolution, --peft.*: any of them given (flag or config file) with no
/// --peft.method_type sets it to LORA, as lerobot-train turns PEFT on when a --peft field is
/// set; a method other than LORA, or PEFT without --policy.path, goes to `errors`.
void apply_peft_flags(Config& config, Provenance& provenance, std::vector<std::string>& errors);

}  // namespace shardkit::train
