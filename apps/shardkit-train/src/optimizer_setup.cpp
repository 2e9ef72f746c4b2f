// AdamW's and the scheduler's options: the run's values, and the policy's preset where they leave room.
#include "optimizer_setup.hpp"

#include <fmt/format.h>

#include <cmath>

#include "shardkit/error.hpp"
#include "train_options.hpp"

namespace shardkit::train {

AdamWOptions adamw_options(Config& config, const Provenance& provenance, const OptimizerPreset* preset,
                           std::string& notes) {
  const auto options = TrainOptions::from(config);
  AdamWOptions adam;
  adam.lr = options.optimizer_lr;
  adam.beta1 = options.optimizer_beta1;
  adam.beta2 = options.optimizer_beta2;
  adam.eps = options.optimizer_eps;
  adam.weight_decay = options.optimizer_weight_decay;
  notes.clear();
  if (!preset) return adam;
  const auto given = [&provenance](const char* key) {
    const auto* source = provenance.find(key);
    return source && Provenance::kind_of(source->origin) != "default";
  };
  if (preset->lr && !given("optimizer.lr")) {
    adam.lr = *preset->lr;
    config.set("optimizer.lr", adam.lr);
    notes += fmt::format("lr {:g}", adam.lr);
  }
  if (preset->weight_decay && !given("optimizer.weight_decay")) {
    adam.weight_decay = *preset->weight_decay;
    config.set("optimizer.weight_decay", adam.weight_decay);
    notes += fmt::format("{}weight_decay {:g}", notes.empty() ? "" : ", ", adam.weight_decay);
  }
  for (const auto& group : preset->groups) {
    adam.lr_factors.emplace_back(group.prefix, adam.lr > 0 ? group.lr / adam.lr : 0.0);
    notes += fmt::format("{}lr {:g} for {}*", notes.empty() ? "" : ", ", group.lr, group.prefix);
  }
  return adam;
}

SchedulerOptions scheduler_options(const Config& config, std::int64_t steps, double peak_lr) {
  const auto options = TrainOptions::from(config);
  SchedulerOptions sched;
  sched.type = options.scheduler_type;
  sched.warmup_steps = options.scheduler_num_warmup_steps;
  if (options.scheduler_warmup_ratio > 0) {
    if (sched.warmup_steps > 0)
      throw ConfigError("--scheduler.num_warmup_steps=" + std::to_string(sched.warmup_steps) +
                        " and --scheduler.warmup_ratio=" + fmt::format("{:g}", options.scheduler_warmup_ratio) +
                        " both set the warmup: give one");
    // transformers' ceil(ratio x optimizer updates), in loop steps.
    const auto accum = std::max<std::int64_t>(1, options.accelerator_gradient_accumulation_steps);
    const auto updates = static_cast<double>(steps / accum);
    sched.warmup_steps = static_cast<std::int64_t>(std::ceil(options.scheduler_warmup_ratio * updates - 1e-9)) * accum;
  }
  sched.accumulation = options.accelerator_gradient_accumulation_steps;
  sched.decay_steps = options.scheduler_num_decay_steps == 0 ? steps : options.scheduler_num_decay_steps;
  sched.peak_lr = peak_lr;
  sched.decay_lr = options.scheduler_decay_lr;
  return sched;
}

}  // namespace shardkit::train
