// LLMTrainingParams -> the shardkit-train command line that trains the same way.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <vector>

#include "llm_params.hpp"

namespace shardkit::llm {

struct Translation {
  std::vector<std::string> train_args;  ///< shardkit-train's flags, in a readable order
  std::vector<std::string> warnings;    ///< said once before training (log wandb, quantization on CPU, ...)
  std::string output_dir;               ///< the project folder
};

/// A model folder's config.json as a JSON object: empty when it is missing or is not one.
boost::json::object model_config(const std::string& folder);

/// AITraining's project path: `project_name` itself when absolute, else under
/// $AUTOTRAIN_PROJECTS_DIR, else under ~/trainings.
std::string project_folder(const std::string& project_name);

/// What shardkit-train is asked to do for `params` on `processes` ranks (`cuda`: whether they
/// run on GPUs). ConfigError listing every value shardkit-llm cannot do as asked, each with its
/// one-line answer.
Translation translate(const Params& params, int processes, bool cuda);

}  // namespace shardkit::llm
