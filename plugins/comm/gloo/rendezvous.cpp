// The rendezvous: which store to join, and waiting for every rank with a named timeout.
#include "rendezvous.hpp"

#include <algorithm>
#include <thread>

#include <shardkit/error.hpp>

#include "c10d_errors.hpp"

namespace shardkit::gloo {

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::shared_ptr<GlooStore> join_run_store(const CommInit& init,
                                          const std::shared_ptr<spdlog::logger>& log) {
  const auto where = init.master_addr + ":" + std::to_string(init.master_port);
  if (init.use_agent_store) {
    if (log) log->debug("gloo: joining the launcher's store at {}", where);
    auto store = connect_tcp_store(init.master_addr, init.master_port, init.timeout,
                                   "the launcher hosts it (TORCHELASTIC_USE_AGENT_STORE=True); "
                                   "is it still running, and can this node reach it?");
    return store->prefixed("/worker/attempt_" + std::to_string(init.restart_count));
  }
  if (init.rank == 0) {
    if (log) log->debug("gloo: rank 0 hosts the store on port {}", init.master_port);
    return host_tcp_store(init.master_port, init.timeout,
                          "MASTER_PORT=" + std::to_string(init.master_port) +
                              " is already in use on " + init.master_addr +
                              ": another run is using it; choose another port (shardkit-run "
                              "--master-port=0 picks a free one)",
                          nullptr);
  }
  if (log) log->debug("gloo: joining the store rank 0 hosts at {}", where);
  return connect_tcp_store(init.master_addr, init.master_port, init.timeout,
                           "rank 0 hosts it: check that rank 0 was started and that this node "
                           "can reach MASTER_ADDR:MASTER_PORT");
}

void wait_for_all_ranks(GlooStore& store, const CommInit& init) {
  store.set(store_keys::arrived(init.rank), "1");
  std::vector<std::string> keys;
  for (int r = 0; r < init.world_size; ++r) keys.push_back(store_keys::arrived(r));
  const auto deadline = std::chrono::steady_clock::now() + init.timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!store.check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::vector<int> absent;
      for (int r = 0; r < init.world_size; ++r)
        if (!store.check({keys[r]})) absent.push_back(r);
      if (absent.empty()) return;  // the last one arrived just now
      const auto where = init.master_addr + ":" + std::to_string(init.master_port);
      throw RuntimeError("rendezvous at " + where + " timed out after " +
                         seconds_text(init.timeout) + ": " + rank_list(absent) +
                         " never arrived (" +
                         std::to_string(init.world_size - static_cast<int>(absent.size())) +
                         " of " + std::to_string(init.world_size) +
                         " joined); check that every node was started and can reach " + where);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace shardkit::gloo
