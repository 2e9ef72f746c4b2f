// Reading a saved policy's config.json for --policy.path: shardkit's own, or LeRobot's.
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
/// JSON object text. "path" is never taken from the file.
RawConfig read_saved_policy_config(const std::string& path);

}  // namespace shardkit::train
