// The host's logger: one spdlog logger owned by core, rank-prefixed, handed to plugins.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace shardkit {

/// The host logger ("shardkit"), created on first use with a "[rank N]" prefix once
/// set_log_rank() was called. Plugins receive it through PluginContext::logger.
std::shared_ptr<spdlog::logger> logger();

/// Sets the rank shown in each line: "[rank N]" when several processes run, unless the
/// launcher prefixes lines itself (shardkit-run sets SHARDKIT_LAUNCHER_PREFIXES_RANKS=1).
void set_log_rank(int rank, int world_size);

/// On ranks other than 0, shows only warnings and errors (`all_ranks` false: every info line
/// appears once per run), or everything (`all_ranks` true, --log_all_ranks=true).
void set_info_ranks(int rank, bool all_ranks);

/// A byte count for people: "512 B", "1.5 KiB", "21.3 MiB", ...
std::string format_bytes(std::int64_t bytes);

}  // namespace shardkit
