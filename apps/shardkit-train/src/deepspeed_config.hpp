// A DeepSpeed JSON config (ds_config.json) folded into shardkit's options, as Hugging Face's integration does.
#pragma once

#include <string>
#include <vector>

#include "shardkit/config.hpp"

namespace shardkit::train {

/// What reading a DeepSpeed config left to say and to check later.
struct DeepSpeedConfig {
  std::vector<std::string> ignored;  ///< fields shardkit does not implement, "key=value"
  /// train_batch_size when given as a number (0: absent or "auto"), checked against
  /// batch_size x gradient accumulation x world size once those are resolved.
  std::int64_t train_batch_size = 0;
  std::string train_batch_size_origin;
};

/// Reads the DeepSpeed config at `path` and adds the shardkit options it sets to `file` (the
/// configuration-file layer): zero_optimization.{stage, reduce_bucket_size,
/// stage3_param_persistence_threshold}, train_micro_batch_size_per_gpu, gradient_accumulation_steps,
/// gradient_clipping, optimizer.params.{lr, eps, weight_decay}, bf16/fp16.enabled
/// (--accelerator.mixed_precision) and fp16.{initial_scale_power, loss_scale_window} (the loss
/// scaler's start and growth interval). "auto" keeps shardkit's value. A value that contradicts
/// one given by a flag or the config file is a ConfigError naming both; both precisions
/// enabled, a static fp16.loss_scale and NVMe offload are ConfigErrors; fields shardkit does
/// not implement are returned in `ignored`.
DeepSpeedConfig apply_deepspeed_config(const std::string& path, const RawConfig& flags, RawConfig& file);

/// Throws ConfigError when `ds` gave a train_batch_size other than micro x accum x world.
void check_deepspeed_batch(const DeepSpeedConfig& ds, std::int64_t micro, std::int64_t accum, int world_size);

}  // namespace shardkit::train
