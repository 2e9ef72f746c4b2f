// The process's place in a run: rank, world size, rendezvous address, read from the launcher's environment.
#pragma once

#include <string>

namespace shardkit {

/// Where this process stands. Single process when no launcher variables are set.
struct Runtime {
  int rank = 0;              ///< global rank
  int world_size = 1;        ///< number of processes
  int local_rank = 0;        ///< rank on this node (chooses cuda:LOCAL_RANK)
  int local_world_size = 1;  ///< processes on this node
  int node_rank = 0;         ///< which node (GROUP_RANK, SLURM_NODEID; else rank / local_world_size)
  std::string device = "cpu";  ///< torch device string, e.g. "cpu" or "cuda:1"
  std::string master_addr = "127.0.0.1";  ///< rendezvous host (MASTER_ADDR)
  int master_port = 29500;                ///< rendezvous port (MASTER_PORT)
  int restart_count = 0;                  ///< TORCHELASTIC_RESTART_COUNT
  bool use_agent_store = false;           ///< TORCHELASTIC_USE_AGENT_STORE=True
  /// What set the variables: "torchrun" (also shardkit-run), "slurm", "openmpi", or "none".
  std::string launcher = "none";

  /// True when more than one process takes part.
  bool multi_process() const { return world_size > 1; }
  /// True on the process that writes shared files (metadata, JSON, the `last` link).
  bool is_main() const { return rank == 0; }

  /// Reads, in order of precedence: torchrun-style variables (RANK, WORLD_SIZE,
  /// LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
  /// TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_USE_AGENT_STORE); Slurm (SLURM_PROCID,
  /// SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE, SLURM_NODEID, the first host of
  /// SLURM_JOB_NODELIST); Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,
  /// OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_SIZE). MASTER_ADDR/MASTER_PORT
  /// override what Slurm or Open MPI imply. No variables means a single process.
  /// Throws ConfigError naming the variable when they are inconsistent.
  static Runtime from_environment();
  /// The same, from an explicit lookup (for tests): returns nullptr for unset names.
  static Runtime from_variables(const char* (*lookup)(const char* name, void* user), void* user);
};

/// The first host of a Slurm node list: "node[03-05,9],gpu1" -> "node03".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace shardkit
