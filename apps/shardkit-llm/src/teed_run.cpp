// A child process whose output is shown and logged, with stop signals forwarded to it.
#include "teed_run.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "shardkit/error.hpp"
#include "signal_pipe.hpp"
#include "worker_process.hpp"

extern char** environ;

namespace shardkit::llm {
namespace {

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const auto n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

int run_teed(const std::string& program_path, const std::vector<std::string>& argv, const std::string& log_file) {
  std::ofstream log;
  if (!log_file.empty()) {
    log.open(log_file, std::ios::app);
    if (!log) throw RuntimeError("cannot write " + log_file + ": " + std::strerror(errno));
  }
  run::SignalPipe signals;  // before the child exists: no SIGCHLD is missed
  run::WorkerSpec spec;
  spec.program_path = program_path;
  spec.argv = argv;
  for (char** e = environ; *e; ++e) spec.env.emplace_back(*e);
  const auto child = run::spawn_worker(spec);

  int fds[2] = {child.stdout_fd, child.stderr_fd};
  const int targets[2] = {STDOUT_FILENO, STDERR_FILENO};
  char buffer[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd polled[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    if (::poll(polled, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto n = ::read(fds[i], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i]);
        fds[i] = -1;
        continue;
      }
      write_all(targets[i], buffer, static_cast<std::size_t>(n));
      if (log) log.write(buffer, n).flush();
    }
    if (polled[2].revents & POLLIN)
      for (const int sig : signals.drain())
        if (sig != SIGCHLD) ::kill(-child.pid, sig);  // the child leads its own process group
  }
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return run::shell_exit_code(status);
}

}  // namespace shardkit::llm
