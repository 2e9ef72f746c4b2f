// The mesh of a resumed run: the checkpoint's degrees, unless the command line changes the topology.
#pragma once

#include <string>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"

namespace shardkit::train {

/// Whether the mesh degrees of a checkpoint's train_config.json (`saved`) bind the run that
/// resumes it. They do unless the command line (`flags`) changes the topology: by giving a
/// degree (the degrees given then describe the whole mesh, a missing one being 1 as in any
/// run), or by naming a backend (`backend`, "deepspeed" already read as "zero") that does not
/// shard when the saved mesh does, or shards when it does not (that backend's own mesh then).
/// False when `saved` holds no degree. Erases the saved degrees that do not bind.
bool keep_saved_mesh(const RawConfig& flags, const std::string& backend, const Registry& registry, RawConfig& saved);

/// The checkpoint's mesh `saved` on `world_size` processes: `saved` itself when it fits, else
/// the same kind of mesh. A replicated mesh (dp_shard=1) gets one replica per process; a fully
/// sharded one (dp_replicate=1) shards over every process; a hybrid one keeps its dp_shard
/// when that divides `world_size` (replicas for the rest) and shards over every process
/// otherwise. Degrees of at least 1.
MeshShape refit_mesh(const MeshShape& saved, int world_size);

/// The mesh of a resumed run bound by its checkpoint's degrees `replicate` x `shard`
/// (keep_saved_mesh) on `world_size` processes: resolve_mesh()'s when they fit, fill the world
/// (dp_shard=-1) or are not degrees at all (its errors), else refit_mesh()'s, with `notice`
/// naming both meshes.
MeshShape resumed_mesh(int world_size, int replicate, int shard, std::string& notice);

}  // namespace shardkit::train
