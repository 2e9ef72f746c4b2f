// The workers of one attempt: started together, watched with poll(), stopped together.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "rank_output.hpp"
#include "signal_pipe.hpp"
#include "worker_process.hpp"

namespace shardkit::run {

/// One running (or finished) worker.
struct Worker {
  int rank = 0;
  int local_rank = 0;
  pid_t pid = -1;  ///< also its process group id
  int fds[2] = {-1, -1};  ///< stdout, stderr read ends; -1 once at end of file
  bool exited = false;
  int status = 0;  ///< waitpid() status once exited
  bool group_gone = false;  ///< no process of its group is left
  bool sigkilled = false;   ///< the launcher had to SIGKILL its group
  std::string error_file;   ///< TORCHELASTIC_ERROR_FILE
  std::unique_ptr<RankOutput> output;
};

/// Owns the workers of one attempt. Every path ends with each worker reaped and its
/// process group empty: stop() on purpose, the destructor as a last resort.
class WorkerGroup {
 public:
  explicit WorkerGroup(SignalPipe& signals);
  ~WorkerGroup();
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;

  /// Starts one worker per spec; `log_paths[i]` ("" = none) gets spec i's raw output.
  /// If a start fails, the workers already started are stopped and the error rethrown.
  void start(const std::vector<WorkerSpec>& specs, const std::vector<std::string>& log_paths,
             const std::vector<std::string>& error_files, double grace_s);

  /// Waits up to `timeout` for output, worker exits or signals, and handles them.
  void pump(std::chrono::milliseconds timeout);

  /// The first SIGINT/SIGTERM/SIGHUP/SIGQUIT received while this group existed (0 when none).
  int interrupt_signal() const { return signals_seen_.empty() ? 0 : signals_seen_.front(); }

  /// Workers in the order they exited (indexes into workers()).
  const std::vector<std::size_t>& exit_order() const { return exit_order_; }
  bool all_exited() const;
  const std::vector<Worker>& workers() const { return workers_; }

  /// `first` (SIGTERM unless a received SIGINT is forwarded) to every worker's process
  /// group, up to `grace_s` for them to exit (output keeps flowing meanwhile), then SIGKILL
  /// to what is left; reaps everything and drains the pipes. A second stop signal during
  /// the grace period skips to SIGKILL.
  void stop(double grace_s, int first = SIGTERM);

 private:
  void reap();
  void read_from(Worker& worker, int which);
  void close_stream(Worker& worker, int which);
  bool everything_gone();
  void signal_groups(int sig);

  SignalPipe& signals_;
  std::vector<Worker> workers_;
  std::vector<std::size_t> exit_order_;
  std::vector<int> signals_seen_;  // stop signals, in order
};

}  // namespace shardkit::run
