// The stop-signal record behind graceful preemption and Ctrl-C (async-signal-safe: one lock-free atomic).
#include "preemption.hpp"

#include <string.h>

#include <atomic>
#include <csignal>

namespace shardkit::train {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig, std::memory_order_relaxed);
}

void install(int sig, int extra_flags) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | extra_flags;
  sigaction(sig, &action, nullptr);
}

}  // namespace

void install_preemption_handler() {
  install(SIGTERM, 0);
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  if (current.sa_handler == SIG_IGN) return;
  // SA_RESETHAND: the first SIGINT is recorded, the second one gets the default action.
  install(SIGINT, SA_RESETHAND);
}

int stop_signal() { return g_signal.load(std::memory_order_relaxed); }

void request_preemption(int sig) { on_stop_signal(sig); }

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

int exit_code_after_stop(int sig) { return sig == SIGINT ? 128 + SIGINT : 0; }

}  // namespace shardkit::train
