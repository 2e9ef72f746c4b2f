// worker_environment(): torchrun's per-worker variables.
#include "worker_env.hpp"

#include <cstdlib>
#include <map>

extern char** environ;

namespace shardkit::run {

bool omp_threads_default(const LaunchOptions& options) {
  return options.omp_threads == 0 && std::getenv("OMP_NUM_THREADS") == nullptr;
}

std::vector<std::string> worker_environment(const LaunchOptions& options, const WorkerPlace& place) {
  const int rank = options.node_rank * options.nproc_per_node + place.local_rank;
  std::map<std::string, std::string> set{
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(options.world_size())},
      {"LOCAL_RANK", std::to_string(place.local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(options.nproc_per_node)},
      {"GROUP_RANK", std::to_string(options.node_rank)},
      {"GROUP_WORLD_SIZE", std::to_string(options.nnodes)},
      // One role ("default") spans every worker, so role ranks are the global ones.
      {"ROLE_RANK", std::to_string(rank)},
      {"ROLE_WORLD_SIZE", std::to_string(options.world_size())},
      {"ROLE_NAME", "default"},
      {"MASTER_ADDR", place.master_addr},
      {"MASTER_PORT", std::to_string(place.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(place.restart_count)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(options.max_restarts)},
      {"TORCHELASTIC_RUN_ID", options.run_id},
      {"TORCHELASTIC_USE_AGENT_STORE", "True"},
      {"TORCHELASTIC_ERROR_FILE", place.error_file},
      // This launcher prefixes every line with [rank<R>]:, so shardkit's logger need not.
      {"SHARDKIT_LAUNCHER_PREFIXES_RANKS", "1"},
  };
  if (omp_threads_default(options)) set["OMP_NUM_THREADS"] = "1";
  if (options.omp_threads > 0) set["OMP_NUM_THREADS"] = std::to_string(options.omp_threads);

  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string item = *entry;
    const auto eq = item.find('=');
    if (eq != std::string::npos && set.count(item.substr(0, eq))) continue;
    env.push_back(item);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

}  // namespace shardkit::run
