// The exponential moving average of the weights (--ema.*, LeRobot main's EMAConfig): its options,
// their checks, and the shadow the trainer updates after each optimizer step.
//
// The schedule is diffusers' EMAModel with use_ema_warmup=True. The shadow is a copy of what the
// optimizer steps (Backend::parameters()): whole parameters under single and ddp, this rank's
// shards under fsdp and zero, so it is sharded as they are; in a LoRA run, the trainable tensors.
//
//   Ema ema(EmaOptions::from(options), backend.parameters());
//   ... optimizer step ...
//   ema.update();
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/backend.hpp"
#include "shardkit/sharded_state.hpp"
#include "train_options.hpp"

namespace shardkit::train {

/// --ema.*, LeRobot main's fields and defaults.
struct EmaOptions {
  bool enable = false;
  std::optional<double> decay;  ///< a constant decay: both clamps (default unset: the schedule's)
  std::int64_t update_after_step = 0;
  double inv_gamma = 1.0;
  double power = 0.75;
  double min_decay = 0.0;
  double max_decay = 0.9999;
  bool use_for_eval = true;  ///< LeRobot's env rollouts only; shardkit runs none

  static EmaOptions from(const TrainOptions& options);
  /// The clamp the schedule applies: [decay, decay] with a constant decay, else [min_decay, max_decay].
  double lowest() const { return decay.value_or(min_decay); }
  double highest() const { return decay.value_or(max_decay); }
};

/// What is wrong with `options`, in LeRobot's words (EMAConfig.__post_init__), one message each;
/// empty when they are valid. Checked whether or not --ema.enable is on, as LeRobot does.
std::vector<std::string> ema_option_errors(const EmaOptions& options);

/// The shadow of a run's weights. Every rank holds the shadow of its own parameters() and makes
/// the same calls; nothing here communicates.
class Ema {
 public:
  /// A shadow for each tensor of `params` (Backend::parameters(), the tensors the optimizer steps
  /// in place), a copy of its current value, at update 0.
  Ema(EmaOptions options, const std::vector<ParamShard>& params);

  /// diffusers' get_decay(optimization_step) with use_ema_warmup: with t = optimization_step -
  /// update_after_step - 1, 0.0 while t <= 0 (not clamped), else 1 - (1 + t / inv_gamma)^-power
  /// clamped to [lowest(), highest()].
  double decay_at(std::int64_t optimization_step) const;
  /// After an optimizer step (once per update, never per micro-batch): counts the update, then
  /// shadow -= (1 - decay_at(count)) * (shadow - param), diffusers' in-place form.
  void update();
  /// Updates counted so far (diffusers' optimization_step).
  std::int64_t optimization_step() const { return optimization_step_; }
  /// Continues a resumed shadow (loaded through add_shadow()) at `step` updates.
  void set_optimization_step(std::int64_t step) { optimization_step_ = step; }
  /// Starts over from the current weights: each shadow a copy of its parameter, at update 0.
  void restart();
  const EmaOptions& options() const { return options_; }
  /// "12 tensors, 3456 elements on this rank", for the log.
  std::string describe() const;

  /// Adds each shadow as "ema.<parameter name>" with its parameter's layout: what a resume loads
  /// (in place) and what ema_state.pt gathers.
  void add_shadow(ShardedState& state) const;
  /// Adds "ema.<name>" for every "model.<name>" entry of `state` (pretrained_model_ema/: a whole
  /// model): the shadow for a parameter the optimizer steps, under each of its names, and the
  /// model's own tensor otherwise (buffers; frozen parameters outside a LoRA run's state).
  void add_model(ShardedState& state) const;

 private:
  struct Shadow {
    std::string name;
    torch::Tensor param;   ///< what the optimizer steps
    torch::Tensor shadow;  ///< same shape, dtype and device
    ShardLayout layout;
    Replicas replicas;
  };
  EmaOptions options_;
  std::vector<Shadow> shadows_;
  std::int64_t optimization_step_ = 0;
};

}  // namespace shardkit::train
