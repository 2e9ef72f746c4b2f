// Learning-rate schedules with LeRobot's warmup and cosine-decay formulas.
#include "scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "shardkit/config.hpp"

namespace shardkit {

double Scheduler::lr(std::int64_t step) const {
  const auto& o = options_;
  if (o.type == "linear") {
    // transformers' get_linear_schedule_with_warmup over optimizer updates: from 0 up to the peak
    // over the warmup, then down to 0 at decay_steps. `step` is the loop step of an update.
    const auto per_update = std::max<std::int64_t>(1, o.accumulation);
    const auto update = static_cast<double>(std::max<std::int64_t>(0, (step + 1) / per_update - 1));
    const auto warmup = static_cast<double>(o.warmup_steps / per_update);
    const auto total = static_cast<double>(o.decay_steps / per_update);
    if (update < warmup) return o.peak_lr * update / warmup;
    return o.peak_lr * std::max(0.0, (total - update) / std::max(1.0, total - warmup));
  }
  if (o.warmup_steps > 0 && step < o.warmup_steps) {
    // LeRobot: from peak/(warmup+1) at step 0 rising linearly to peak at warmup_steps.
    const double start = 1.0 / static_cast<double>(o.warmup_steps + 1);
    if (step <= 0) return o.peak_lr * start;
    const double frac = 1.0 - static_cast<double>(step) / static_cast<double>(o.warmup_steps);
    return o.peak_lr * ((start - 1.0) * frac + 1.0);
  }
  if (o.type == "cosine" && o.decay_steps > 0) {
    const double s = static_cast<double>(std::min(step, o.decay_steps));
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * s / static_cast<double>(o.decay_steps)));
    const double alpha = o.peak_lr > 0 ? o.decay_lr / o.peak_lr : 0.0;
    return o.peak_lr * ((1.0 - alpha) * cosine + alpha);
  }
  return o.peak_lr;
}

std::string Scheduler::state_json(std::int64_t next_step) const {
  return "{\n  \"type\": \"" + options_.type + "\",\n  \"last_epoch\": " +
         std::to_string(next_step) + ",\n  \"warmup_steps\": " +
         std::to_string(options_.warmup_steps) + ",\n  \"decay_steps\": " +
         std::to_string(options_.decay_steps) + ",\n  \"peak_lr\": " +
         to_string(Value(options_.peak_lr)) + ",\n  \"decay_lr\": " +
         to_string(Value(options_.decay_lr)) + ",\n  \"_last_lr\": [" +
         to_string(Value(lr(next_step))) + "]\n}\n";
}

}  // namespace shardkit
