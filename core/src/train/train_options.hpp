// The options shardkit-train itself declares, and how plugin options are namespaced.
#pragma once

#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"

namespace shardkit::train {

/// The plugins a run selects, after `auto` is resolved.
struct Selection {
  std::string policy, dataset, backend, checkpoint_format;
  std::string comm;  ///< transport plugin; used only when more than one process runs
};

/// Core's top-level options (steps, batch_size, optimizer.*, ...).
const std::vector<OptionSpec>& core_options();

/// The flag prefix of a plugin's options: "policy.", "dataset.", "accelerator.<name>.",
/// "checkpoint.<name>.".
std::string option_prefix(const std::string& kind, const std::string& name);

/// The config key that selects a plugin of `kind` ("policy.type", "distributed_backend", ...).
std::string selector_key(const std::string& kind);

/// Core options + the selected plugins' options + the other plugins' options as inactive.
/// When `only_selected_help` is set, nothing is marked inactive (used for --help).
Schema build_schema(const Registry& registry, const Selection& selection);

/// Resolves distributed_backend=auto for the mesh: single for one process, ddp when
/// nothing is sharded, fsdp otherwise. Refuses ddp on a sharded mesh.
std::string resolve_backend(const std::string& requested, const MeshShape& mesh);

/// Resolves distributed.comm=auto for the policy's device: gloo (cpu) or nccl (cuda).
std::string resolve_comm(const std::string& requested, const std::string& device);

}  // namespace shardkit::train
