// Activation checkpointing of a model's wrap blocks (torch.utils.checkpoint for shardkit::nn blocks).
//
// A checkpointed block keeps only its inputs through forward and runs its forward_impl again in
// backward (see BlockBase::set_activation_checkpointing). This header chooses which blocks:
//
//   auto names = shardkit::nn::checkpoint_blocks(policy, policy.wrap_modules(),
//                                                shardkit::nn::CheckpointingMode::Full, 1);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>

namespace shardkit::nn {

/// --accelerator.activation_checkpointing.mode: none; full (every wrap block); selective (every
/// k-th wrap block: torchtitan's layer-selective checkpointing).
enum class CheckpointingMode { None, Full, Selective };

/// "none", "full" or "selective"; anything else throws ConfigError naming `option`.
CheckpointingMode parse_checkpointing_mode(const std::string& text, const std::string& option);
const char* checkpointing_mode_name(CheckpointingMode mode);

/// Sets activation checkpointing on the outermost blocks under `root` whose class is in `classes`
/// (the wrap units) and off on every other block. Full: all of them; Selective: the `every`-th,
/// 2·`every`-th, ... in registration order (torchtitan's count; every = 1 is full); None: none.
/// Returns the names of the checkpointed blocks. Throws ConfigError when `every` < 1.
std::vector<std::string> checkpoint_blocks(torch::nn::Module& root, const std::vector<std::string>& classes,
                                           CheckpointingMode mode, std::int64_t every);

}  // namespace shardkit::nn
