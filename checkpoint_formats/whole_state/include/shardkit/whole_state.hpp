// A ShardedState as whole tensors in LeRobot's two safetensors files (model and optimizer state).
//
// What the `safetensors` checkpoint format writes, shared with `safetensors_dcp`:
// `pretrained_model/model.safetensors` ("model." entries, names without the prefix) and
// `training_state/optimizer_state.safetensors` ("optimizer." entries), and with --ema.enable
// `pretrained_model_ema/model.safetensors` ("ema." entries). A PEFT adapter's model and EMA
// entries (ShardedState::model_is_adapter) go to `adapter_model.safetensors` in those folders
// under PEFT's names instead.
#pragma once

#include <string>

#include "shardkit/comm.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// Where the files lie, relative to the checkpoint folder (LeRobot's and PEFT's names).
inline constexpr const char* kWholeModelFile = "pretrained_model/model.safetensors";
inline constexpr const char* kWholeAdapterFile = "pretrained_model/adapter_model.safetensors";
inline constexpr const char* kWholeOptimizerFile = "training_state/optimizer_state.safetensors";
inline constexpr const char* kWholeEmaModelFile = "pretrained_model_ema/model.safetensors";
inline constexpr const char* kWholeEmaAdapterFile = "pretrained_model_ema/adapter_model.safetensors";
/// The prefix PEFT's saved adapters put before a base model's parameter names.
inline constexpr const char* kPeftKeyPrefix = "base_model.model.";

/// Writes the entries of `state` whose key starts with `prefix` ("model.", "optimizer.", "ema.",
/// or "" for all) as whole tensors into checkpoint folder `dir`, on rank 0 of `group` only
/// (nullptr: this process alone). Entries sharded across the group (fsdp, zero) are gathered
/// to rank 0 first, one entry at a time (rank 0 then holds the whole state, as a full state
/// dict does). Collective over `group`.
void save_whole_state(const ShardedState& state, const std::string& prefix, const std::string& dir,
                      CommGroup* group);

/// Fills every chunk of `wanted`'s entries under `prefix` from those files (any box out of
/// the whole tensors). Throws FormatError naming the file and tensor when one is missing,
/// has another shape, or is malformed.
void load_whole_state(ShardedState& wanted, const std::string& prefix, const std::string& dir);

/// Whether `dir` holds pretrained_model/model.safetensors (or a PEFT run's adapter_model.safetensors).
bool has_whole_model(const std::string& dir);

}  // namespace shardkit
