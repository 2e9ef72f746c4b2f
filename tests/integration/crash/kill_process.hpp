// Processes the kill harness starts in the background, finds the workers of, and kills.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace shardkit::test {

/// `argv` started in the background with stdout and stderr into `log_path`.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path);

/// The live child processes of `parent` (read from /proc).
std::vector<pid_t> children_of(pid_t parent);

/// Waits up to `seconds` for `pid` (a child of this process) to exit; its exit code (128 +
/// signal when killed), or -1 when it is still running.
int wait_exit(pid_t pid, double seconds);

/// Waits up to `seconds` until none of `pids` is alive (zombies count as gone); true if so.
bool wait_gone(const std::vector<pid_t>& pids, double seconds);

}  // namespace shardkit::test
