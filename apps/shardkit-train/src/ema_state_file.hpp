// A checkpoint's EMA records: LeRobot's training_state/ema_state.pt (diffusers' EMAModel.state_dict()
// as torch.save writes it) and training_state/ema_state.json, what a resume reads besides the shadow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/Tensor.h>

#include "ema.hpp"

namespace shardkit::train {

/// Where the records lie in a checkpoint folder.
inline constexpr const char* kEmaStatePt = "training_state/ema_state.pt";
inline constexpr const char* kEmaStateJson = "training_state/ema_state.json";

/// The bytes of ema_state.pt: a dict with diffusers' keys, in its order: decay (the upper clamp),
/// min_decay, optimization_step, update_after_step, use_ema_warmup (true), inv_gamma, power and
/// shadow_params, `shadow_params` (whole CPU tensors in the order of the policy's parameters(),
/// as EMAModel(policy.parameters()) keeps them). Plain Python types throughout (dict, list,
/// float, int, bool), so torch.load(weights_only=True) reads it and EMAModel.load_state_dict
/// accepts it.
std::string ema_state_pt(const EmaOptions& options, std::int64_t optimization_step,
                         const std::vector<at::Tensor>& shadow_params);

/// ema_state.json: the same scalars as ema_state.pt, without the shadow.
std::string ema_state_json(const EmaOptions& options, std::int64_t optimization_step);
/// The optimization_step of ema_state.json at `path`; FormatError naming the file when it has
/// none (or a negative one).
std::int64_t read_ema_optimization_step(const std::string& path);

}  // namespace shardkit::train
