// Joining a run: the store (the launcher's, or one rank 0 hosts) and the wait for every rank.
#pragma once

#include <memory>

#include <spdlog/logger.h>

#include <shardkit/comm.hpp>

#include "gloo_store.hpp"

namespace shardkit::gloo {

/// The run's store. With use_agent_store, the launcher's TCPStore joined as a client under
/// "/worker/attempt_<restart_count>" (what torch.distributed does under torchrun);
/// otherwise rank 0 hosts it at master_port and the others join it.
std::shared_ptr<GlooStore> join_run_store(const CommInit& init,
                                          const std::shared_ptr<spdlog::logger>& log);

/// Marks this rank arrived and waits until every rank did. After init.timeout, throws
/// RuntimeError naming the ranks that never arrived.
void wait_for_all_ranks(GlooStore& store, const CommInit& init);

/// "rank 1", "ranks 2, 3".
std::string rank_list(const std::vector<int>& ranks);

}  // namespace shardkit::gloo
