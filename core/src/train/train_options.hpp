// The options shardkit-train itself declares, and how plugin options are namespaced.
#pragma once

#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::train {

/// The plugins a run selects, after `auto` is resolved.
struct Selection {
  std::string policy, dataset, backend, checkpoint_format;
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

/// Resolves distributed_backend=auto for `world_size` processes.
std::string resolve_backend(const std::string& requested, int world_size);

}  // namespace shardkit::train
