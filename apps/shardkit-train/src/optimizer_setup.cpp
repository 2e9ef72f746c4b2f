// AdamW's and the scheduler's options: the run's values, and the policy's preset where they leave room.
#include "optimizer_setup.hpp"

#include <fmt/format.h>

namespace shardkit::train {

AdamWOptions adamw_options(Config& config, const Provenance& provenance, const OptimizerPreset* preset,
                           std::string& notes) {
  AdamWOptions adam;
  adam.lr = config.get_float("optimizer.lr");
  adam.beta1 = config.get_float("optimizer.beta1");
  adam.beta2 = config.get_float("optimizer.beta2");
  adam.eps = config.get_float("optimizer.eps");
  adam.weight_decay = config.get_float("optimizer.weight_decay");
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
  SchedulerOptions sched;
  sched.type = config.get_string("scheduler.type");
  sched.warmup_steps = config.get_int("scheduler.num_warmup_steps");
  sched.decay_steps = config.get_int("scheduler.num_decay_steps");
  if (sched.decay_steps == 0) sched.decay_steps = steps;
  sched.peak_lr = peak_lr;
  sched.decay_lr = config.get_float("scheduler.decay_lr");
  return sched;
}

}  // namespace shardkit::train
