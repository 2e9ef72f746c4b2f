// --dataset.preview=N: a dataset's first examples on stdout instead of a run.
#pragma once

#include <optional>

#include "run_builder.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit::train {

/// When the selected dataset offers the dataset_preview capability and its preview option is
/// above 0: creates the dataset, writes its preview to stdout on the main rank and returns the
/// exit code (0). nullopt otherwise: the run goes on.
std::optional<int> preview_dataset(const RunPlan& plan, const Runtime& runtime);

}  // namespace shardkit::train
