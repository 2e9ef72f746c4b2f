// Where a resumed run continues: the run folder that holds the checkpoint being resumed.
#include "resume_location.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

#include "checkpoint_manifest.hpp"
#include "shardkit/error.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

namespace {

constexpr const char* kExpected = "<run>/checkpoints/<step>/pretrained_model/train_config.json";

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
}

}  // namespace

ResumeLocation locate_resume(const std::string& config_path, const RawConfig& flags,
                             const RawConfig& file) {
  const fs::path path = fs::path(config_path).lexically_normal();
  const auto pretrained = path.parent_path();
  const auto checkpoint = pretrained.parent_path();
  const auto checkpoints = checkpoint.parent_path();
  if (fs::is_directory(path) || path.filename() != "train_config.json" ||
      pretrained.filename() != "pretrained_model" || checkpoints.filename() != "checkpoints")
    throw ConfigError("--config_path=" + config_path + " is not a checkpoint's train config with "
                      "--resume=true: expected " + kExpected);
  if (!fs::is_regular_file(path))
    throw ConfigError("checkpoint folder " + checkpoint.string() + " does not exist or has no " +
                      "pretrained_model/train_config.json; expected --config_path=" + kExpected +
                      " of a saved checkpoint");

  ResumeLocation where;
  const fs::path run = checkpoints.parent_path().empty() ? fs::path(".") : checkpoints.parent_path();
  where.run_dir = run.string();
  where.checkpoint_dir = checkpoint.string();
  if (auto it = flags.find("output_dir"); it != flags.end()) {
    const auto asked = to_string(it->second.value);
    if (!asked.empty() && !same_folder(asked, run))
      throw ConfigError("--output_dir=" + asked + " is not the run folder of the checkpoint being "
                        "resumed (" + where.run_dir + "); a resumed run continues in its own folder: "
                        "drop --output_dir, or copy the run folder there and resume that copy");
    return where;
  }
  if (auto it = file.find("output_dir"); it != file.end()) {
    const auto saved = to_string(it->second.value);
    if (!saved.empty() && !same_folder(saved, run))
      where.notice = "continuing in " + where.run_dir + ", the folder that holds the checkpoint (its "
                     "train_config.json names output_dir=" + saved + ")";
  }
  return where;
}

std::string newest_in_place_of_last(const std::string& config_path, std::string& notice) {
  const fs::path path = fs::path(config_path).lexically_normal();
  const auto checkpoint = path.parent_path().parent_path();
  if (checkpoint.filename() != "last" || path.filename() != "train_config.json") return config_path;
  const auto checkpoints = checkpoint.parent_path();
  std::string restored;
  for (const auto& line : restore_moved_aside(checkpoints.string())) restored += (restored.empty() ? "" : "; ") + line;
  const auto newest = newest_checkpoint(checkpoints.string());
  notice = restored;
  if (newest.empty()) return config_path;
  std::error_code ec;
  if (fs::exists(checkpoint, ec) && fs::equivalent(checkpoint, newest, ec)) return config_path;
  const auto target = fs::read_symlink(checkpoint, ec);
  notice += std::string(notice.empty() ? "" : "; ") + "resuming from " + newest + ", the newest checkpoint (checkpoints/last names " +
           (ec ? std::string("nothing") : target.string()) + ": its save was interrupted before the link moved)";
  return (fs::path(newest) / "pretrained_model" / "train_config.json").string();
}

}  // namespace shardkit::train
