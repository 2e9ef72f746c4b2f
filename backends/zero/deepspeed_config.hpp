// A DeepSpeed JSON config (ds_config.json) folded into shardkit's options, as Hugging Face's integration does:
// the zero backend's configuration layer and check (its PluginHooks).
#pragma once

#include "shardkit/plugin.hpp"

namespace shardkit::zero {

/// zero's configuration layer: when --accelerator.zero.config_file names a DeepSpeed config, adds
/// the shardkit options it sets to the configuration-file layer: zero_optimization.{stage,
/// reduce_bucket_size, stage3_param_persistence_threshold}, train_micro_batch_size_per_gpu,
/// gradient_accumulation_steps, gradient_clipping, optimizer.params.{lr, eps, weight_decay},
/// bf16/fp16.enabled (--accelerator.mixed_precision) and fp16.{initial_scale_power,
/// loss_scale_window} (the loss scaler's start and growth interval). "auto" keeps shardkit's value.
/// A value that contradicts one given by a flag or the config file is a ConfigError naming both;
/// both precisions enabled, a static fp16.loss_scale and NVMe offload are ConfigErrors; fields
/// shardkit does not implement are named in one warning.
void read_deepspeed_config(const ConfigLayerRequest& request);

/// zero's check of the resolved configuration: a DeepSpeed train_batch_size (a number, not
/// "auto") must be batch_size x gradient accumulation x world size.
void check_deepspeed_batch(const ConfigCheckRequest& request);

}  // namespace shardkit::zero
