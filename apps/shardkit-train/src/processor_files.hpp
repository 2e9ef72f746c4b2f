// LeRobot's policy processors for a run: the normalizer from dataset statistics and the policy's mapping, and its files.
#pragma once

#include <map>
#include <string>

#include "normalizer.hpp"
#include "shardkit/dataset.hpp"

namespace shardkit::train {

/// The normalizer of LeRobot's preprocessor for `dataset` under `mapping`: every dataset
/// feature LeRobot types (observation.* STATE or VISUAL, action ACTION, ...) with its shape,
/// and all the dataset's statistics (none, and so nothing normalized, when the dataset lacks
/// DatasetStatistics).
Normalizer dataset_normalizer(const Dataset& dataset, const NormalizationMapping& mapping);

/// LeRobot's processor files for `normalizer`, keyed by their path in a checkpoint folder:
/// pretrained_model/policy_preprocessor.json (steps rename, to_batch, device, normalizer) with
/// policy_preprocessor_step_3_normalizer_processor.safetensors, and
/// pretrained_model/policy_postprocessor.json (unnormalizer, device) with
/// policy_postprocessor_step_0_unnormalizer_processor.safetensors; the safetensors hold every
/// statistic as `<feature>.<stat>` (float32). `device` is the policy's torch device.
std::map<std::string, std::string> processor_files(const Normalizer& normalizer, const std::string& device);

}  // namespace shardkit::train
