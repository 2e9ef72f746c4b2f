// The run builder: a command line -> the resolved configuration, the selected plugins and the mesh.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config_provenance.hpp"
#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"
#include "train_options.hpp"

namespace shardkit::train {

/// What a command line asks of shardkit-train, resolved and checked: all that a Trainer, a dry
/// run or --print_config is built from. Building it joins no other rank and touches no run folder.
struct RunPlan {
  std::unique_ptr<Registry> registry;  ///< the discovered plugins; what is built from them refers to it
  std::optional<std::string> help;     ///< --help: the text to print (then nothing below is set)
  Config config;                       ///< every option's value
  Provenance provenance;               ///< where each value came from
  TrainOptions options;                ///< config's values of shardkit-train's own options
  Selection selection;                 ///< the plugins, `auto` resolved
  MeshShape mesh;                      ///< the degrees, resolved for the processes (or the dry run's)
  bool dry_run = false;
  std::string resume_dir;              ///< the checkpoint a resumed run continues from; "" for a fresh run
  std::vector<std::string> infos;      ///< notices for the log, once its ranks are set (--log_all_ranks)
  std::vector<std::string> warnings;   ///< the same, as warnings
};

/// Builds the plan of `args` (the command line without the program) for `runtime`'s processes:
/// the layers (a config file, or the checkpoint's train_config.json on --resume; a --policy.path
/// folder's config.json; the flags), plugin discovery, the selection (aliases and `auto`
/// resolved), the mesh, the selected plugins' configuration layers and checks, and every option's
/// value. Throws ConfigError with every problem at once, FormatError for a damaged checkpoint.
RunPlan build_run(const std::vector<std::string>& args, const Runtime& runtime);

}  // namespace shardkit::train
