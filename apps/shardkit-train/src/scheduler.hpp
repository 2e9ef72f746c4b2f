// Learning-rate schedules: constant and cosine decay, both with linear warmup (LeRobot's shapes),
// and linear decay with warmup (transformers' get_linear_schedule_with_warmup, AITraining's default).
#pragma once

#include <cstdint>
#include <string>

namespace shardkit {

/// Schedule settings; `type` is "constant", "cosine" or "linear".
struct SchedulerOptions {
  std::string type = "constant";   ///< default "constant"
  std::int64_t warmup_steps = 0;   ///< linear warmup length in loop steps, default 0
  std::int64_t decay_steps = 0;    ///< cosine: steps to reach decay_lr (0 = all steps); linear: to reach 0
  double peak_lr = 1e-3;           ///< the optimizer's lr
  double decay_lr = 0.0;           ///< cosine: final lr, default 0
  /// linear: loop steps per optimizer update; the schedule counts updates, as transformers'
  /// Trainer does (warmup_steps and decay_steps are loop steps, multiples of it)
  std::int64_t accumulation = 1;
};

/// The learning rate at loop step `step` (0-based). Advances once per loop step.
class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options) : options_(std::move(options)) {}
  double lr(std::int64_t step) const;
  /// scheduler_state.json content for `next_step` (steps taken so far).
  std::string state_json(std::int64_t next_step) const;
  const SchedulerOptions& options() const { return options_; }

 private:
  SchedulerOptions options_;
};

}  // namespace shardkit
