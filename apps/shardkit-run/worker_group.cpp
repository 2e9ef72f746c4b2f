// WorkerGroup: the poll() loop over worker pipes and signals, reaping, and the stop sequence.
#include "worker_group.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace shardkit::run {
namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Whether any process (zombies included) is left in process group `pgid`.
bool group_alive(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

milliseconds until(Clock::time_point deadline, milliseconds cap) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(milliseconds(0), std::min(left, cap));
}

constexpr milliseconds kTick(50);
// After the last worker is gone, how long to wait for a pipe still held open by a
// process that left its group (setsid) before giving up on its last output.
constexpr milliseconds kDrainLimit(1000);
// SIGKILL cannot be refused; this only bounds a process stuck in the kernel.
constexpr milliseconds kKillLimit(10000);

}  // namespace

WorkerGroup::WorkerGroup(SignalPipe& signals) : signals_(signals) {}

WorkerGroup::~WorkerGroup() {
  // Last resort (an exception unwound past stop()): nothing may outlive the launcher.
  for (auto& w : workers_)
    if (!w.group_gone) ::kill(-w.pid, SIGKILL);
  for (auto& w : workers_) {
    if (!w.exited) {
      int status = 0;
      while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    for (int which = 0; which < 2; ++which)
      if (w.fds[which] >= 0) ::close(w.fds[which]);
  }
}

void WorkerGroup::start(const std::vector<WorkerSpec>& specs,
                        const std::vector<std::string>& log_paths,
                        const std::vector<std::string>& error_files, double grace_s) {
  workers_.reserve(specs.size());  // addresses stay put while workers are added
  try {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto output = std::make_unique<RankOutput>(specs[i].rank, log_paths[i]);
      const SpawnedWorker spawned = spawn_worker(specs[i]);
      Worker w;
      w.rank = specs[i].rank;
      w.local_rank = specs[i].local_rank;
      w.pid = spawned.pid;
      w.fds[0] = spawned.stdout_fd;
      w.fds[1] = spawned.stderr_fd;
      w.error_file = error_files[i];
      w.output = std::move(output);
      workers_.push_back(std::move(w));
    }
  } catch (...) {
    stop(grace_s);
    throw;
  }
}

void WorkerGroup::close_stream(Worker& w, int which) {
  w.output->finish(which == 0 ? Stream::Out : Stream::Err);
  ::close(w.fds[which]);
  w.fds[which] = -1;
}

void WorkerGroup::read_from(Worker& w, int which) {
  char buffer[65536];
  const ssize_t n = ::read(w.fds[which], buffer, sizeof buffer);
  if (n > 0) {
    w.output->feed(which == 0 ? Stream::Out : Stream::Err, buffer, static_cast<std::size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close_stream(w, which);
  }
}

void WorkerGroup::reap() {
  // The launcher is a child subreaper, so orphans of a worker's subtree land here too;
  // reaping them keeps zombies from making a process group look alive.
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      if (workers_[i].pid == pid && !workers_[i].exited) {
        workers_[i].exited = true;
        workers_[i].status = status;
        exit_order_.push_back(i);
      }
    }
  }
}

void WorkerGroup::pump(milliseconds timeout) {
  std::vector<pollfd> fds{{signals_.fd(), POLLIN, 0}};
  std::vector<std::pair<std::size_t, int>> owners{{0, -1}};
  for (std::size_t i = 0; i < workers_.size(); ++i)
    for (int which = 0; which < 2; ++which)
      if (workers_[i].fds[which] >= 0) {
        fds.push_back({workers_[i].fds[which], POLLIN, 0});
        owners.emplace_back(i, which);
      }
  const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  if (ready > 0) {
    for (std::size_t k = 1; k < fds.size(); ++k)
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR))
        read_from(workers_[owners[k].first], owners[k].second);
  }
  for (int sig : signals_.drain())
    if (sig != SIGCHLD) signals_seen_.push_back(sig);
  reap();
}

bool WorkerGroup::all_exited() const {
  return std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.exited; });
}

bool WorkerGroup::everything_gone() {
  bool gone = true;
  for (auto& w : workers_) {
    // A group can only be checked once its leader is reaped: before that the leader
    // itself (perhaps a zombie) keeps the group alive.
    if (!w.group_gone && w.exited && !group_alive(w.pid)) w.group_gone = true;
    gone = gone && w.group_gone;
  }
  return gone;
}

void WorkerGroup::signal_groups(int sig) {
  for (auto& w : workers_) {
    if (w.group_gone) continue;
    if (::kill(-w.pid, sig) != 0 && errno == ESRCH) {
      if (w.exited) w.group_gone = true;
    } else if (sig == SIGKILL) {
      w.sigkilled = true;
    }
  }
}

void WorkerGroup::stop(double grace_s, int first) {
  if (!everything_gone()) {
    signal_groups(first);
    const auto grace_end =
        Clock::now() + milliseconds(static_cast<std::int64_t>(grace_s * 1000.0));
    // A signal arriving during the grace period (a second Ctrl-C) skips the wait.
    const std::size_t signals_before = signals_seen_.size();
    while (!everything_gone() && Clock::now() < grace_end &&
           signals_seen_.size() == signals_before)
      pump(until(grace_end, kTick));
    const auto kill_end = Clock::now() + kKillLimit;
    while (!everything_gone() && Clock::now() < kill_end) {
      signal_groups(SIGKILL);  // again each tick: a dying shell may still have forked
      pump(until(kill_end, kTick));
    }
  }
  const auto drain_end = Clock::now() + kDrainLimit;
  auto open_streams = [&] {
    for (const auto& w : workers_)
      if (w.fds[0] >= 0 || w.fds[1] >= 0) return true;
    return false;
  };
  while (open_streams() && Clock::now() < drain_end) pump(until(drain_end, kTick));
  for (auto& w : workers_)
    for (int which = 0; which < 2; ++which)
      if (w.fds[which] >= 0) close_stream(w, which);
}

}  // namespace shardkit::run
