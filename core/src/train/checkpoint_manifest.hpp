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

/// Writes `dir`/manifest.json for every regular file under `dir` (through a temporary file
/// and a rename, so that a manifest is either complete or absent).
void write_manifest(const std::string& dir);

/// "" when `dir` matches its manifest; otherwise what is wrong, naming the file
/// ("training_state/rng_state.safetensors is 1024 bytes, the manifest says 2048").
/// A folder without a manifest (saved by shardkit before manifests, or by another tool) is
/// judged by the files a checkpoint needs; with Verify::Checksums it is a problem.
std::string manifest_problem(const std::string& dir, Verify how);

/// The newest complete checkpoint in `checkpoints_dir` (<run>/checkpoints): the step folder
/// with the highest number whose manifest_problem(..., Verify::Sizes) is empty, or "" when
/// none is. `skipped` receives "<folder>: <problem>" for each newer folder passed over; the
/// folder `exclude` (if any) is not considered.
std::string newest_complete_checkpoint(const std::string& checkpoints_dir, std::vector<std::string>* skipped = nullptr,
                                       const std::string& exclude = "");

/// Removes what interrupted saves left in `checkpoints_dir` (".tmp-<step>" folders, a
/// ".last.tmp" link); returns their names.
std::vector<std::string> remove_unfinished_saves(const std::string& checkpoints_dir);

}  // namespace shardkit::train
