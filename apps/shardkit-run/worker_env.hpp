// The environment each worker gets: torchrun's variables on top of the launcher's own.
#pragma once

#include <string>
#include <vector>

#include "launch_options.hpp"

namespace shardkit::run {

/// Where one worker stands and how to reach the store.
struct WorkerPlace {
  int local_rank = 0;
  int restart_count = 0;
  std::string master_addr;
  int master_port = 0;
  std::string error_file;  ///< TORCHELASTIC_ERROR_FILE
};

/// The launcher's environment with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
/// GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, ROLE_NAME, MASTER_ADDR,
/// MASTER_PORT, TORCHELASTIC_* and OMP_NUM_THREADS (see omp_threads_default()) set or
/// replaced, as NAME=VALUE strings.
std::vector<std::string> worker_environment(const LaunchOptions& options, const WorkerPlace& place);

/// True when workers get OMP_NUM_THREADS=1 because the user did not set it (torchrun
/// only does so for more than one worker per node; shardkit-run always does).
bool omp_threads_default(const LaunchOptions& options);

}  // namespace shardkit::run
