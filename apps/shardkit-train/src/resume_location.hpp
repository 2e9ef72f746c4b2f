// Where a resumed run continues: the run folder that holds the checkpoint being resumed.
#pragma once

#include <string>

#include "shardkit/config.hpp"

namespace shardkit::train {

/// The run folder of a resume and what the user should be told about it.
struct ResumeLocation {
  std::string run_dir;         ///< <config_path>/../../.., as the path was given
  std::string checkpoint_dir;  ///< <config_path>/../..
  std::string notice;          ///< non-empty when the saved output_dir named another folder
};

/// Checks that `config_path` is <run>/checkpoints/<step>/pretrained_model/train_config.json
/// and returns its run folder. An --output_dir flag naming another folder is a ConfigError;
/// a saved output_dir (from the checkpoint's train_config.json) naming another one is
/// replaced, with a notice.
ResumeLocation locate_resume(const std::string& config_path, const RawConfig& flags,
                             const RawConfig& file);

/// A resume through <run>/checkpoints/last/pretrained_model/train_config.json continues from the
/// newest checkpoint (newest_checkpoint), which `last` names unless a save was interrupted
/// between publishing its folder and moving the link.
/// Returns the train_config.json of that checkpoint and sets `notice` when it is not what
/// `last` names; other paths are returned unchanged. Without any complete checkpoint, the path
/// is returned unchanged too (the checks that follow name what is missing).
std::string newest_in_place_of_last(const std::string& config_path, std::string& notice);

}  // namespace shardkit::train
