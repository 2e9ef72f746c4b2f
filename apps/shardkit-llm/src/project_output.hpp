// AITraining's project folder around shardkit's run folder, once training has succeeded: the final
// model (the merged model of a LoRA run with merge_adapter, in the base model's dtype; else the
// adapter, or the full model) with its tokenizer at the top, a README.md model card, and runs/ for
// TensorBoard (shardkit-train keeps the checkpoints to save_total_limit as it goes).
#pragma once

#include <string>
#include <vector>

#include "llm_params.hpp"

namespace shardkit::llm {

/// Lays out `project` (the run's output folder) as AITraining leaves it; returns what it did, a
/// line each, for the console. RuntimeError when a file cannot be copied or written.
std::vector<std::string> finish_project(const std::string& project, const Params& params);

}  // namespace shardkit::llm
