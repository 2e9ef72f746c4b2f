// SignalPipe: the self-pipe trick, so signals wake the launcher's poll() loop.
#include "signal_pipe.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "shardkit/error.hpp"

namespace shardkit::run {
namespace {

int g_pipe[2] = {-1, -1};
constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};
constexpr int kNumCaught = sizeof kCaught / sizeof kCaught[0];
struct sigaction g_previous[kNumCaught];

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  // A full pipe only loses a duplicate wake-up: the loop reaps and rechecks anyway.
  [[maybe_unused]] const auto n = ::write(g_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe() {
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw RuntimeError(std::string("cannot create the signal pipe: ") + std::strerror(errno));
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int i = 0; i < kNumCaught; ++i) ::sigaction(kCaught[i], &action, &g_previous[i]);
}

SignalPipe::~SignalPipe() {
  for (int i = 0; i < kNumCaught; ++i) ::sigaction(kCaught[i], &g_previous[i], nullptr);
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int SignalPipe::fd() const { return g_pipe[0]; }

std::vector<int> SignalPipe::drain() {
  std::vector<int> signals;
  unsigned char buffer[64];
  ssize_t n;
  while ((n = ::read(g_pipe[0], buffer, sizeof buffer)) > 0)
    for (ssize_t i = 0; i < n; ++i) signals.push_back(buffer[i]);
  return signals;
}

void reset_signals_in_child() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGHUP, SIGQUIT})
    ::sigaction(sig, &action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace shardkit::run
