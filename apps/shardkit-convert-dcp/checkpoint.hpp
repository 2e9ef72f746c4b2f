// A checkpoint folder converted in place: its manifest kept true, and with --delete_dcp a checkpoint of the `safetensors` format left behind.
#pragma once

#include <functional>
#include <string>

#include "convert.hpp"

namespace shardkit::convert {

/// What the model of a checkpoint becomes.
struct ModelTarget {
  std::string file;         ///< relative to the checkpoint: kWholeModelFile, or kWholeAdapterFile for a PEFT run's
  std::string name_prefix;  ///< "" or, for a PEFT adapter, PEFT's "base_model.model."
};

/// A PEFT run's checkpoint (it has pretrained_model/adapter_config.json) holds only the
/// adapter: it becomes PEFT's adapter file, under PEFT's names. Any other, model.safetensors.
ModelTarget model_target(const std::string& dir);

/// Converts checkpoint folder `dir` (<run>/checkpoints/<step>) in place.
///
/// The model's DCP folder (pretrained_model/pytorch_model_fsdp_0) becomes
/// pretrained_model/model.safetensors (a PEFT run's, with adapter_config.json, becomes
/// adapter_model.safetensors under PEFT's names), which manifest.json then lists; an EMA run's
/// pretrained_model_ema/pytorch_model_fsdp_0 likewise becomes pretrained_model_ema's file.
///
/// With `delete_dcp` the optimizer's DCP folder (training_state/optimizer_0) also becomes
/// training_state/optimizer_state.safetensors, manifest.json stops listing the DCP
/// folders, and they are removed, the model's first. The folder is then a checkpoint of the
/// `safetensors` format, byte for byte what that format writes: a resume finds no DCP model,
/// detects the `safetensors` format from the files and loads both files from it. Refused,
/// changing nothing, when the checkpoint does not match its manifest.
///
/// Each step leaves a checkpoint that resumes: every file is written to a temporary name and
/// renamed, the manifest is replaced only once the files it lists are durable, and a DCP folder
/// is renamed aside (atomically: there whole or not at all) before it is deleted.
///
/// `progress()` gives the progress callback of each conversion; `report` receives one line per
/// file written or removed. Throws FormatError naming the file on any problem.
void convert_checkpoint(const std::string& dir, bool delete_dcp, const std::function<Progress()>& progress,
                        const std::function<void(const std::string&)>& report);

}  // namespace shardkit::convert
