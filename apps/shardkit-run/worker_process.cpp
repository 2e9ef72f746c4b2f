// spawn_worker(): fork/exec of one worker with its own process group and piped output.
#include "worker_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "shardkit/error.hpp"
#include "signal_pipe.hpp"

namespace shardkit::run {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& items) {
  std::vector<char*> out;
  out.reserve(items.size() + 1);
  for (const auto& item : items) out.push_back(const_cast<char*>(item.c_str()));
  out.push_back(nullptr);
  return out;
}

void write_all(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

/// Closes every descriptor from 3 up. Async-signal-safe.
void close_other_fds(int max_fd) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
  for (int fd = 3; fd < max_fd; ++fd) ::close(fd);
}

}  // namespace

SpawnedWorker spawn_worker(const WorkerSpec& spec) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw RuntimeError("cannot create a pipe for rank " + std::to_string(spec.rank) + ": " +
                       std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw RuntimeError("cannot create a pipe for rank " + std::to_string(spec.rank) + ": " +
                       std::strerror(e));
  }
  // Everything the child needs is prepared before fork(): the launcher has threads (the
  // store server), so the child may only make async-signal-safe calls until execve().
  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.env);
  const std::string exec_error =
      "shardkit-run: cannot execute " + spec.program_path + ": ";
  struct rlimit limit {};
  const int max_fd = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                         ? static_cast<int>(limit.rlim_cur)
                         : 65536;
  const pid_t parent = ::getpid();
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (const int cpu : spec.cpus) CPU_SET(cpu, &cpus);
  const std::string affinity_error =
      "shardkit-run: cannot pin rank " + std::to_string(spec.rank) + " to its CPUs (it runs unpinned): ";

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw RuntimeError("cannot fork rank " + std::to_string(spec.rank) + ": " +
                       std::strerror(e));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the launcher died before prctl
    reset_signals_in_child();
    if (!spec.cpus.empty() && ::sched_setaffinity(0, sizeof(cpus), &cpus) != 0) {
      const int e = errno;
      write_all(err_pipe[1], affinity_error.c_str());
      write_all(err_pipe[1], ::strerrordesc_np(e));
      write_all(err_pipe[1], "\n");
    }
    ::dup2(out_pipe[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    ::dup2(err_pipe[1], STDERR_FILENO);
    close_other_fds(max_fd);
    ::execve(spec.program_path.c_str(), argv.data(), envp.data());
    const int e = errno;
    write_all(STDERR_FILENO, exec_error.c_str());
    write_all(STDERR_FILENO, ::strerrordesc_np(e));
    write_all(STDERR_FILENO, "\n");
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so signalling the group right away works
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  return SpawnedWorker{pid, out_pipe[0], err_pipe[0]};
}

std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) != 0)
      throw ConfigError("cannot run '" + program + "': " + std::strerror(errno));
    return program;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw ConfigError("'" + program + "' was not found on PATH; give the program's path " +
                    "(e.g. ./" + program + ")");
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
  }
  return "stopped with wait status " + std::to_string(status);
}

bool exited_cleanly(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

int shell_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace shardkit::run
