// The EMA weights of a run (--ema.enable) in its sharded state and checkpoints.
//
// A backend's state holds them as "ema.<parameter name>" entries (with the parameter's layout).
// A checkpoint format writes them under `<dir>/pretrained_model_ema/` as it writes "model."
// entries under `<dir>/pretrained_model/` (the same files, each "ema.<name>" as "model.<name>"
// would be), so that folder loads as a model: LeRobot's layout.
#pragma once

#include <string>

#include "shardkit/sharded_state.hpp"

namespace shardkit {

/// The folder beside pretrained_model/ that holds a run's EMA weights, LeRobot's name.
inline constexpr const char* kPretrainedEmaFolder = "pretrained_model_ema";

/// The entries of `state` under `from`, keyed under `to` instead ("ema.x" -> "model.x"), with
/// its model_is_adapter and no objects. They share their tensors with `state`'s: loading into
/// the copy fills those tensors.
ShardedState renamed_entries(const ShardedState& state, const std::string& from, const std::string& to);

}  // namespace shardkit
