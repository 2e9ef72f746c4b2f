// Checks a --policy.path folder written by LeRobot or shardkit against the dataset it will train on.
#pragma once

#include <string>

#include "shardkit/policy.hpp"

namespace shardkit::train {

/// The features the policy from `pretrained_dir` is built on, given the dataset's `dataset`
/// features. When the folder's config.json lists LeRobot's input_features/output_features,
/// each must be in the dataset with the same shape (ConfigError naming the feature, both
/// shapes and `dataset_name` otherwise), and observations the saved policy does not read
/// (a camera it was not trained with) are left out, as LeRobot builds a policy from its
/// config's features. Without those lists (shardkit's own config.json) `dataset` is returned.
FeatureShapes features_for_saved_policy(const std::string& pretrained_dir, const FeatureShapes& dataset,
                                        const std::string& dataset_name);

/// Opens the LeRobot processor files in `pretrained_dir` (policy_preprocessor.json,
/// policy_postprocessor.json and the safetensors files they name), so that a damaged one is a
/// FormatError naming it before training starts rather than when LeRobot loads the result.
void check_processor_files(const std::string& pretrained_dir);

}  // namespace shardkit::train
