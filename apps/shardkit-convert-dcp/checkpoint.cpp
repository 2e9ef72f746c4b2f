// convert_checkpoint: the files converted, the manifest replaced, then the DCP folders removed, in an order that survives a crash.
#include "checkpoint.hpp"

#include <filesystem>
#include <vector>

// Core's checkpoint manifest (how the trainer writes and checks one); this tool changes
// checkpoints in place and must keep theirs true.
#include "../shardkit-train/src/checkpoint_manifest.hpp"
#include "shardkit/dcp/folder.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/whole_state.hpp"

namespace shardkit::convert {
namespace fs = std::filesystem;

namespace {

/// Removes `folder` so that it is never seen half deleted: renamed to a hidden sibling first
/// (one atomic step, after which no format finds it), then deleted.
void remove_folder(const fs::path& folder) {
  const auto aside = folder.parent_path() / ("." + folder.filename().string() + ".deleted");
  std::error_code ec;
  fs::remove_all(aside, ec);  // left by an interrupted deletion
  fs::rename(folder, aside, ec);
  if (ec) throw FormatError("cannot move " + folder.string() + " aside to delete it: " + ec.message());
  sync_directory(folder.parent_path().string());
  fs::remove_all(aside, ec);
  if (ec)
    throw FormatError("cannot delete " + aside.string() + " (" + ec.message() +
                      "); the checkpoint no longer uses it: delete it by hand");
}

}  // namespace

ModelTarget model_target(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "pretrained_model/adapter_config.json")) return {kWholeAdapterFile, kPeftKeyPrefix};
  return {kWholeModelFile, ""};
}

void convert_checkpoint(const std::string& dir, bool delete_dcp, const std::function<Progress()>& progress,
                        const std::function<void(const std::string&)>& report) {
  const fs::path root(dir);
  if (delete_dcp && fs::exists(root / train::kManifestFile))
    if (const auto problem = train::manifest_problem(dir, train::Verify::Sizes); !problem.empty())
      throw FormatError("checkpoint " + dir + " does not match its manifest: " + problem +
                        "; --delete_dcp changes nothing in a damaged checkpoint");

  const auto model = model_target(dir);
  std::vector<std::string> written{model.file}, removed;
  report(summary((root / model.file).string(), convert_folder((root / dcp::kModelFolder).string(),
                                                              (root / model.file).string(), progress(),
                                                              model.name_prefix)));
  // --ema.enable: pretrained_model_ema/'s DCP folder, keyed as a model, becomes its model file.
  if (fs::exists(root / dcp::kEmaModelFolder)) {
    const auto ema_file = model.file == kWholeAdapterFile ? kWholeEmaAdapterFile : kWholeEmaModelFile;
    report(summary((root / ema_file).string(), convert_folder((root / dcp::kEmaModelFolder).string(),
                                                              (root / ema_file).string(), progress(),
                                                              model.name_prefix)));
    written.push_back(ema_file);
  }
  if (delete_dcp) {
    removed.push_back(dcp::kModelFolder);
    // A checkpoint is read in one format, detected from its model's files: without the DCP
    // model it is read as `safetensors`, which takes the optimizer state from its own file.
    if (fs::exists(root / dcp::kOptimizerFolder)) {
      report(summary((root / kWholeOptimizerFile).string(),
                     convert_folder((root / dcp::kOptimizerFolder).string(), (root / kWholeOptimizerFile).string(),
                                    progress(), "", "optimizer.")));
      written.push_back(kWholeOptimizerFile);
      removed.push_back(dcp::kOptimizerFolder);
    }
    if (fs::exists(root / dcp::kEmaModelFolder)) removed.push_back(dcp::kEmaModelFolder);
  }
  // The written files are durable (fsync'ed, renamed, folder synced) before the manifest lists
  // them, and the manifest no longer lists the DCP folders before they go.
  if (train::update_manifest(dir, written, removed)) report("updated " + (root / train::kManifestFile).string());
  // The model's folder first: while it is there the checkpoint is still read as DCP, which
  // needs the optimizer's folder too.
  for (const auto& folder : removed) {
    remove_folder(root / folder);
    report("removed " + (root / folder).string());
  }
}

}  // namespace shardkit::convert
