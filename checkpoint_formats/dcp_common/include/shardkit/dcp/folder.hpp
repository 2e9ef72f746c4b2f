// Saving and loading a ShardedState as one PyTorch DCP folder (`.metadata` + `__<rank>_0.distcp`).
//
// The folder is what `torch.distributed.checkpoint.save` writes with FileSystemWriter: every
// rank writes its own data file (each item a torch.save blob), rank 0 writes `.metadata`
// last. Keys are the state's own ("model.<fqn>", "optimizer.state.<fqn>.<slot>"), which are
// the keys accelerate's DCP save flattens to, so Python's `dcp.load` reads the folder.
//
//   shardkit::dcp::save_folder(state, "model.", dir + "/pretrained_model/pytorch_model_fsdp_0", &world);
//   shardkit::dcp::load_folder(wanted, "model.", dir + "/pretrained_model/pytorch_model_fsdp_0");
#pragma once

#include <memory>
#include <string>

#include "shardkit/comm.hpp"
#include "shardkit/dcp/metadata.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit::dcp {

/// Where a checkpoint folder keeps its DCP model and optimizer folders: accelerate's names,
/// which LeRobot's sharded checkpoints use.
inline constexpr const char* kModelFolder = "pretrained_model/pytorch_model_fsdp_0";
inline constexpr const char* kOptimizerFolder = "training_state/optimizer_0";
/// The EMA weights (--ema.enable) as a model folder of their own, under the model's keys.
inline constexpr const char* kEmaModelFolder = "pretrained_model_ema/pytorch_model_fsdp_0";

/// The data file rank `rank` writes: "__<rank>_0.distcp".
std::string data_file_name(int rank);

/// Writes the entries of `state` whose key starts with `prefix` into folder `dir` (created
/// if missing). Collective over `world` (nullptr: this process alone): each rank writes
/// and fsyncs its data file (a replicated entry and the non-tensor entries of
/// `state.objects`, as torch.save byte items, only on rank 0), then rank 0 gathers every
/// rank's write results and writes `.metadata`. Throws FormatError on I/O errors.
void save_folder(const ShardedState& state, const std::string& prefix, const std::string& dir,
                 CommGroup* world);

/// Fills every chunk of the entries of `wanted` whose key starts with `prefix` from the
/// DCP folder `dir` (written by shardkit or by PyTorch, at any number of ranks): each
/// wanted box is assembled from the saved chunks that overlap it. Throws FormatError
/// naming the file and entry when the metadata is malformed, an entry is missing or has
/// another shape, a chunk's bytes lie outside its file, or the saved chunks leave part of
/// a wanted box uncovered. Non-tensor entries (`wanted.objects` under `prefix`) take the
/// folder's values; a param-group key "<p>.param_groups.<index>.<field>" is also found under
/// its per-parameter spelling "<p>.param_groups.<first parameter>.<field>". Those the folder
/// lacks are removed from `wanted.objects`, so the caller sees what was loaded.
void load_folder(ShardedState& wanted, const std::string& prefix, const std::string& dir);

/// A checkpoint folder's DCP folders: "model." entries into kModelFolder, "optimizer."
/// entries into kOptimizerFolder and "ema." entries, keyed "model.", into kEmaModelFolder
/// (only when there are some; collective, as save_folder).
void save_checkpoint(const ShardedState& state, const std::string& dir, CommGroup* world);
/// Fills `wanted` from checkpoint folder `dir`'s DCP folders (the optimizer folder only when
/// `wanted` has optimizer entries, the EMA folder only when it has "ema." entries).
void load_checkpoint(ShardedState& wanted, const std::string& dir);
/// Whether checkpoint folder `dir` holds a DCP model folder.
bool has_checkpoint_model(const std::string& dir);

/// A DCP folder opened for reading: `.metadata` read and checked once, data files mapped
/// into memory, and of each item only the pages load() copies from are read. load_folder() is FolderReader(dir).load(wanted, prefix).
class FolderReader {
 public:
  /// Throws FormatError when `dir` has no readable, well-formed `.metadata`.
  explicit FolderReader(const std::string& dir);
  ~FolderReader();
  FolderReader(const FolderReader&) = delete;
  FolderReader& operator=(const FolderReader&) = delete;

  /// The folder's metadata (entries in the file's order).
  const Metadata& metadata() const;
  /// As load_folder(): fills the chunks of `wanted`'s entries under `prefix`.
  void load(ShardedState& wanted, const std::string& prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The LibTorch dtype of a DCP dtype name ("float32", "bfloat16"); FormatError when none.
at::ScalarType scalar_type_of(const std::string& dcp_dtype);

/// Whether `dir` holds a `.metadata` file.
bool is_folder(const std::string& dir);

}  // namespace shardkit::dcp
