// The host's logger: one spdlog logger owned by core, rank-prefixed, handed to plugins.
#pragma once

#include <memory>

#include <spdlog/logger.h>

namespace shardkit {

/// The host logger ("shardkit"), created on first use with a "[rank N]" prefix once
/// set_log_rank() was called. Plugins receive it through PluginContext::logger.
std::shared_ptr<spdlog::logger> logger();

/// Sets the rank shown in each line (and whether to show one at all).
void set_log_rank(int rank, int world_size);

}  // namespace shardkit
