// Where a LeRobot dataset lives on disk: --dataset.root, or $HF_LEROBOT_HOME/<repo_id> as LeRobot does.
#pragma once

#include <string>

namespace shardkit::lerobot {

/// The dataset folder for `repo_id` and `root` (either may be empty, not both). `root` wins;
/// otherwise $HF_LEROBOT_HOME/<repo_id>, HF_LEROBOT_HOME defaulting to
/// $HF_HOME/lerobot, then $XDG_CACHE_HOME/huggingface/lerobot, then
/// ~/.cache/huggingface/lerobot. Throws ConfigError naming the
/// folder looked at, and how to download the dataset, when it does not exist.
std::string locate_dataset(const std::string& repo_id, const std::string& root);

}  // namespace shardkit::lerobot
