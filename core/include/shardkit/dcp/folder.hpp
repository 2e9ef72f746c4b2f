// Saving and loading a ShardedState as one PyTorch DCP folder (`.metadata` + `__<rank>_0.distcp`).
//
// The folder is what `torch.distributed.checkpoint.save` writes with FileSystemWriter: every
// rank writes its own data file (each item a torch.save blob), rank 0 writes `.metadata`
// last. Keys are the state's own ("model.<fqn>", "optimizer.state.<fqn>.<slot>"), which are
// the keys accelerate's DCP save flattens to, so Python's `dcp.load` reads the folder.
//
//   shardkit::dcp::save_folder(state, "model.", dir + "/pretrained_model/pytorch_model_fsdp_0", world);
//   shardkit::dcp::load_folder(wanted, "model.", dir + "/pretrained_model/pytorch_model_fsdp_0");
#pragma once

#include <string>

#include "shardkit/comm.hpp"
#include "shardkit/sharded_state.hpp"

namespace shardkit::dcp {

/// The data file rank `rank` writes: "__<rank>_0.distcp".
std::string data_file_name(int rank);

/// Writes the entries of `state` whose key starts with `prefix` into folder `dir` (created
/// if missing). Collective over `world`: each rank writes and fsyncs its data file (a
/// replicated entry only on rank 0), then rank 0 gathers every rank's write results and
/// writes `.metadata`. Throws FormatError on I/O errors.
void save_folder(const ShardedState& state, const std::string& prefix, const std::string& dir,
                 CommGroup& world);

/// Fills every chunk of the entries of `wanted` whose key starts with `prefix` from the
/// DCP folder `dir` (written by shardkit or by PyTorch, at any number of ranks): each
/// wanted box is assembled from the saved chunks that overlap it. Throws FormatError
/// naming the file and entry when the metadata is malformed, an entry is missing or has
/// another shape, a chunk's bytes lie outside its file, or the saved chunks leave part of
/// a wanted box uncovered.
void load_folder(ShardedState& wanted, const std::string& prefix, const std::string& dir);

/// Whether `dir` holds a `.metadata` file.
bool is_folder(const std::string& dir);

}  // namespace shardkit::dcp
