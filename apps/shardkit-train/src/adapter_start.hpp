// --policy.path at a PEFT adapter folder: a new run that trains that adapter further on its base.
#pragma once

#include <string>

#include "shardkit/config.hpp"

namespace shardkit::train {

/// When --policy.path (in `flags`, else in `file`) is a PEFT adapter folder (it holds
/// adapter_config.json: a LoRA run's checkpoint pretrained_model), sets the run up to continue
/// training that adapter on its base, as PEFT's PeftModel.from_pretrained(base, adapter,
/// is_trainable=True) does: policy.path becomes the base (adapter_config.json's
/// base_model_name_or_path, absolute) and peft.adapter_path the adapter folder, in the layer
/// that named it; the adapter's LoRA options (peft_type, r, lora_alpha, lora_dropout,
/// target_modules, modules_to_save as full_training_modules) fill the --peft.* options that
/// neither layer gives. With --peft.adapter_path given instead (and the base as --policy.path),
/// only the options are filled, from its adapter_config.json when that is there. Returns the
/// line to log, or "" when --policy.path is no adapter folder. Throws ConfigError naming
/// adapter_config.json when it cannot be read, names no base folder that exists here, or asks
/// for what shardkit does not train (another peft_type, DoRA, rsLoRA), and when both
/// --policy.path and --peft.adapter_path name adapters.
std::string start_from_adapter(RawConfig& flags, RawConfig& file);

}  // namespace shardkit::train
