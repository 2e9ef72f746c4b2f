// The manifest of a checkpoint folder: every file with its size and XXH3-64 checksum, written
// last, so that a damaged or incomplete checkpoint is named instead of loaded.
#pragma once

#include <string>
#include <vector>

namespace shardkit::train {

/// File name of the manifest, at the checkpoint folder's root.
inline constexpr const char* kManifestFile = "manifest.json";

/// How much of a manifest to check: sizes (cheap; done on every resume) or also checksums
/// (--checkpoint.verify=true).
enum class Verify { Sizes, Checksums };

/// The XXH3-64 checksum of the file at `path` (read in 1 MiB pieces), as 16 lowercase hex
/// digits: what a manifest lists. FormatError when it cannot be read.
std::string file_checksum(const std::string& path);

/// Writes `dir`/manifest.json for every regular file under `dir` (through a temporary file
/// and a rename, so that a manifest is either complete or absent).
void write_manifest(const std::string& dir);

/// Brings `dir`/manifest.json up to date after a tool changed the checkpoint in place
/// (shardkit-convert-dcp): the files `written` (paths relative to `dir`) are listed with
/// their size and checksum, as write_manifest lists them; entries of `removed` (files or
/// folders, relative) and of everything under them are dropped; every other entry is kept as
/// it was, so that damage since the save is still found. Replaced as write_manifest replaces
/// it, and the folder synced, so that the new manifest is durable before `removed` is
/// deleted. Returns false, changing nothing, when `dir` has no manifest (such a folder is
/// judged by its files); FormatError when the manifest is damaged or a written file missing.
bool update_manifest(const std::string& dir, const std::vector<std::string>& written,
                     const std::vector<std::string>& removed);

/// "" when `dir` matches its manifest; otherwise what is wrong, naming the file
/// ("training_state/rng_state.safetensors is 1024 bytes, the manifest says 2048").
/// A folder without a manifest (saved by shardkit before manifests, or by another tool) is
/// judged by the files a checkpoint needs; with Verify::Checksums it is a problem.
std::string manifest_problem(const std::string& dir, Verify how);

/// The newest complete checkpoint in `checkpoints_dir` (<run>/checkpoints): the step folder
/// with the highest number whose manifest_problem(..., Verify::Sizes) is empty, other than
/// `exclude` (if given); "" when there is none.
std::string newest_complete_checkpoint(const std::string& checkpoints_dir, const std::string& exclude = "");

/// What to do instead of loading the damaged or incomplete checkpoint `dir`: "Resume from
/// <newest other complete checkpoint> ... with --config_path=<its train_config.json>", or
/// that its folder holds no other complete checkpoint.
std::string other_checkpoint_advice(const std::string& dir);

/// The step folder with the highest number in `checkpoints_dir` that is a checkpoint at all (has
/// a pretrained_model folder), complete or not, or "" when there is none. Saves publish a
/// folder only once it is complete, so this is the newest complete one unless something
/// damaged it afterwards; loading it then names the damage instead of silently going back.
std::string newest_checkpoint(const std::string& checkpoints_dir);

/// Moves every ".old-<step>" folder whose <step> is missing back to <step>: a save of a step
/// that already existed was interrupted after moving the old copy aside. Returns one line per
/// folder restored. Safe to run from several ranks at once.
std::vector<std::string> restore_moved_aside(const std::string& checkpoints_dir);

/// Removes what interrupted saves left in `checkpoints_dir` (".tmp-<step>" folders, a
/// ".last.tmp" link, ".old-<step>" folders of a re-save; an ".old-<step>" whose replacement
/// never arrived is moved back to <step>); returns what it did, one line each.
std::vector<std::string> remove_unfinished_saves(const std::string& checkpoints_dir);

}  // namespace shardkit::train
