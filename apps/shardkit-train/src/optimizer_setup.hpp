// The optimizer's and the scheduler's options, from the run's configuration and the policy's preset.
#pragma once

#include <cstdint>
#include <string>

#include "adamw.hpp"
#include "config_provenance.hpp"
#include "scheduler.hpp"
#include "shardkit/config.hpp"
#include "shardkit/optimizer_preset.hpp"

namespace shardkit::train {

/// AdamW's options: the run's --optimizer.* values, then `preset` (the policy's
/// OptimizerPresetPolicy, or nullptr) where the options leave room for it. Its lr and weight
/// decay replace values the run did not give (`provenance` says which it gave) and are written
/// back into `config`, so that a resume, which reads them from the checkpoint as given values,
/// keeps them; its groups become learning-rate factors. `notes` is set to what the preset
/// changed, for the log ("lr 1e-05, weight_decay 0.0001, lr 1e-05 for model.backbone*"), or "".
AdamWOptions adamw_options(Config& config, const Provenance& provenance, const OptimizerPreset* preset,
                           std::string& notes);

/// The scheduler's options: --scheduler.*, peaking at `peak_lr`; a cosine decay over all
/// `steps` when --scheduler.num_decay_steps is 0.
SchedulerOptions scheduler_options(const Config& config, std::int64_t steps, double peak_lr);

}  // namespace shardkit::train
