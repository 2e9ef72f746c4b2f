// The SIGTERM flag behind graceful preemption (async-signal-safe: one lock-free atomic store).
#include "preemption.hpp"

#include <atomic>
#include <csignal>

namespace shardkit::train {
namespace {

std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_sigterm(int) { g_requested.store(true, std::memory_order_relaxed); }

}  // namespace

void install_preemption_handler() {
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
}

bool preemption_requested() { return g_requested.load(std::memory_order_relaxed); }

void request_preemption() { g_requested.store(true, std::memory_order_relaxed); }

}  // namespace shardkit::train
