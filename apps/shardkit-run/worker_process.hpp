// Starting one worker process: its own process group, killed with the launcher, output through pipes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace shardkit::run {

/// What to start for one rank.
struct WorkerSpec {
  int rank = 0;
  int local_rank = 0;
  std::string program_path;       ///< from resolve_program()
  std::vector<std::string> argv;  ///< argv[0] is the program as the user wrote it
  std::vector<std::string> env;   ///< the whole environment, NAME=VALUE
  std::vector<int> cpus;          ///< the CPUs it may run on (sched_setaffinity); empty = the launcher's
};

/// A started worker: its pid (also its process group id) and the read ends of its pipes.
struct SpawnedWorker {
  pid_t pid = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
};

/// fork/exec with setpgid (the launcher signals the whole subtree through the group),
/// PR_SET_PDEATHSIG=SIGKILL (nothing outlives a killed launcher), stdout and stderr on
/// pipes, every other descriptor closed, default signal dispositions. Throws
/// shardkit::RuntimeError when the pipes or the fork fail; an exec failure shows up as
/// the worker's exit code 127 with the reason on its stderr.
SpawnedWorker spawn_worker(const WorkerSpec& spec);

/// The file execve() will run: `program` itself when it contains a '/', else the first
/// executable match on PATH. Throws shardkit::ConfigError naming the program otherwise.
std::string resolve_program(const std::string& program);

/// "exited with code 3" or "killed by signal 9 (SIGKILL)", from a waitpid() status.
std::string describe_exit(int wait_status);

/// True when a waitpid() status means exit code 0.
bool exited_cleanly(int wait_status);

/// The exit code a shell would show for a waitpid() status: the code itself, or
/// 128 + N for a process killed by signal N (137 for SIGKILL).
int shell_exit_code(int wait_status);

}  // namespace shardkit::run
