// The options shardkit-train itself declares, and how plugin options are namespaced.
#pragma once

#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit::train {

/// The plugins a run selects, after `auto` is resolved.
struct Selection {
  std::string policy, dataset, backend, checkpoint_format;
  std::string comm;  ///< transport plugin; used only when more than one process runs
  std::vector<std::string> loggers{"jsonl"};  ///< logger plugins, jsonl first (always on)
  /// The chosen plugin of `kind` (loggers comma-separated); "" for a kind the run does not select.
  std::string of(const std::string& kind) const;
  /// Whether the run selects plugin `name` of `kind`.
  bool selects(const std::string& kind, const std::string& name) const;
  /// Every selected plugin as (kind, name): policy, dataset, backend, format, comm (when
  /// `with_comm`: a run of several processes), loggers.
  std::vector<std::pair<std::string, std::string>> plugins(bool with_comm) const;
};

/// Core's top-level options (steps, batch_size, optimizer.*, ...).
const std::vector<OptionSpec>& core_options();

/// The flag prefix of a plugin's options: "policy.", "dataset.", "accelerator.<name>.",
/// "checkpoint.<name>." (the kind table's).
std::string option_prefix(const std::string& kind, const std::string& name);

/// What a plugin of `kind` called `name` gets from shardkit-train: its options (under
/// option_prefix), the whole configuration, the logger and the runtime (no mesh).
PluginContext plugin_context(const Config& config, const Runtime& runtime, const std::string& kind,
                             const std::string& name);

/// Core options + the selected plugins' options + the other plugins' options as inactive.
/// When `only_selected_help` is set, nothing is marked inactive (used for --help).
Schema build_schema(const Registry& registry, const Selection& selection);

/// The Trait bits plugin `name` of `kind` declares (0 when it is not installed).
std::uint32_t traits_of(const Registry& registry, const std::string& kind, const std::string& name);

/// Resolves distributed_backend=auto for the mesh: single for one process, ddp when
/// nothing is sharded, fsdp otherwise (an error saying so when no installed backend shards
/// parameters). Unknown names are left for Registry::get to report.
std::string resolve_backend(const std::string& requested, const MeshShape& mesh,
                            const Registry& registry);

/// Refuses, at start-up, a selection whose plugins' traits cannot work together: a backend
/// that does not shard on a sharded mesh, a one-process backend under a launcher, a checkpoint
/// format that cannot hold the sharded states of a sharding backend (when checkpoints are
/// saved). Throws ConfigError.
void check_traits(const Registry& registry, const Selection& selection, const MeshShape& mesh,
                  bool multi_process, bool saves_checkpoints, const std::string& requested_backend);

/// The logger plugins --logger.type=a,b names, jsonl first and always (it writes metrics.jsonl),
/// each once.
std::vector<std::string> resolve_loggers(const std::string& requested);

/// Resolves distributed.comm=auto for the policy's device: gloo (cpu) or nccl (cuda).
std::string resolve_comm(const std::string& requested, const std::string& device);

}  // namespace shardkit::train
