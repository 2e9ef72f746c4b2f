// The process's place in a run: rank, world size and device, read from the launcher's environment.
#pragma once

#include <string>

namespace shardkit {

/// Where this process stands. Single process when no launcher variables are set.
struct Runtime {
  int rank = 0;              ///< global rank (RANK)
  int world_size = 1;        ///< number of processes (WORLD_SIZE)
  int local_rank = 0;        ///< rank on this node (LOCAL_RANK)
  int local_world_size = 1;  ///< processes on this node (LOCAL_WORLD_SIZE)
  std::string device = "cpu";  ///< torch device string, e.g. "cpu" or "cuda:1"

  /// True when more than one process takes part.
  bool multi_process() const { return world_size > 1; }
  /// True on the process that writes shared files (metadata, JSON, the `last` link).
  bool is_main() const { return rank == 0; }

  /// Reads torchrun-style variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE).
  /// Throws ConfigError when they are inconsistent (e.g. RANK >= WORLD_SIZE).
  static Runtime from_environment();
};

}  // namespace shardkit
