// --dry_run: the per-rank memory plan of a backend on a mesh, computed in one process.
#pragma once

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"
#include "train_options.hpp"

namespace shardkit::train {

/// Builds the dataset, the policy and the backend (on a planning mesh of `mesh`'s shape, so no
/// other process is needed), prints rank 0's memory plan and returns the exit code (0).
int print_memory_plan(const Config& config, const Registry& registry, const Runtime& runtime,
                      const Selection& selection, const MeshShape& mesh);

}  // namespace shardkit::train
