// Runs the attempts of a launch: start the workers, watch them, report a failure, restart.
#pragma once

#include <string>
#include <vector>

#include "launch_options.hpp"
#include "rendezvous.hpp"
#include "worker_group.hpp"

namespace shardkit::run {

/// How one attempt ended.
struct AttemptOutcome {
  enum class Kind {
    Succeeded,     ///< every worker exited 0
    Failed,        ///< a worker of this node failed (see `worker`)
    RemoteFailed,  ///< a launcher on another node reported a failed worker (`detail`)
    StoreLost,     ///< the rendezvous store stopped answering (`detail`)
    Interrupted,   ///< the launcher got a stop signal (`signal`); `worker` = first unclean, or -1
  };
  Kind kind = Kind::Succeeded;
  int worker = -1;  ///< index into the attempt's workers
  int signal = 0;   ///< a stop signal received during the attempt (0 = none)
  /// The launcher's exit code for this outcome when it ends the launch: `worker`'s own
  /// (128 + N when killed by signal N), or 1 when no worker of this node failed.
  int exit_code = 1;
  std::string detail;
};

/// Owns the launch after the flags are parsed and the rendezvous is set up.
class Supervisor {
 public:
  /// `cpu_shares`: the CPUs of each local rank (--cpu-bind=cores), or empty (unpinned).
  Supervisor(const LaunchOptions& options, Rendezvous& rendezvous, std::string program_path,
             std::string scratch_dir, std::vector<std::vector<int>> cpu_shares = {});
  /// Runs attempts until success, a signal, or no restarts left; returns the exit code:
  /// 0, the first failed worker's code (see AttemptOutcome::exit_code), or 1.
  int run();

 private:
  AttemptOutcome run_attempt(int attempt);
  AttemptOutcome watch(WorkerGroup& group, int attempt);
  void report(const WorkerGroup& group, const AttemptOutcome& outcome) const;
  std::vector<WorkerSpec> worker_specs(int attempt, std::vector<std::string>& log_paths,
                                       std::vector<std::string>& error_files) const;

  LaunchOptions options_;
  Rendezvous& rendezvous_;
  std::string program_path_;
  std::string scratch_dir_;
  std::vector<std::vector<int>> cpu_shares_;
};

/// Writes "shardkit-run: <message>" as one line to stderr.
void say(const std::string& message);
/// As say(), only when LOGLEVEL=DEBUG (torchrun's variable) is set.
void debug(const std::string& message);

}  // namespace shardkit::run
