// Reading a saved policy's config.json for --policy.path: shardkit's own, LeRobot's or transformers'.
#pragma once

#include <string>

#include "shardkit/config.hpp"

namespace shardkit::train {

/// The policy options (keys without "policy.") that the config.json at `path` gives. Either
/// shardkit's form (the policy's options) or LeRobot's <Policy>Config JSON, recognised by its
/// input_features/output_features: then LeRobot's PreTrainedConfig fields that are no shardkit
/// option (input_features, output_features, device, use_amp, use_peft, push_to_hub, repo_id,
/// private, tags, license, pretrained_path, pretrained_revision) are skipped, a null becomes the
/// text "null" (the spelling of an unset optional value), and normalization_mapping stays one
/// JSON object text. "path" is never taken from the file. A Hugging Face transformers
/// config.json ("model_type", no "type") selects the policy named by model_type ("type") and
/// gives its other fields as options, except those describing the file (architectures,
/// torch_dtype, dtype, transformers_version, _name_or_path, use_cache); a null is left out (the
/// option's default), lists and objects stay JSON text.
RawConfig read_saved_policy_config(const std::string& path);

}  // namespace shardkit::train
