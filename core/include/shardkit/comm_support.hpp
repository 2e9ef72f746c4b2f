// What every comm plugin needs whatever its transport: the rendezvous wait, group checks, failure messages.
//
// These work on the SDK's Store and CommInit only, so the gloo and nccl plugins (and a
// third-party transport) share one rendezvous and one set of messages:
//
//   store_ = my_join_store(init);            // the transport's own store
//   shardkit::wait_for_all_ranks(*store_, init);
//   const int position = shardkit::group_position("nccl", ranks, tag, init);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/comm.hpp"

namespace shardkit {

/// Marks this rank arrived (store_keys::arrived) and waits until every rank did. After
/// init.timeout, throws RuntimeError naming the ranks that never arrived and the address.
void wait_for_all_ranks(Store& store, const CommInit& init);

/// Checks init() arguments every transport shares (rank in the world, positive timeout);
/// throws ConfigError prefixed "comm '<transport>': ".
void check_comm_init(const std::string& transport, const CommInit& init);

/// This process's position in `ranks` for new_group(): checks that the tag is non-empty,
/// the ranks are sorted, distinct, inside the world, and include init.rank; throws
/// ConfigError naming the group otherwise.
int group_position(const std::string& transport, const std::vector<int>& ranks,
                   const std::string& tag, const CommInit& init);

/// "rank 1", "ranks 2, 3".
std::string rank_list(const std::vector<int>& ranks);
/// "3 s", "0.5 s": a timeout as people write it.
std::string seconds_text(std::chrono::milliseconds timeout);
/// Python's spelling of a dtype: "float32", "bfloat16", "int64".
std::string dtype_name(torch::ScalarType dtype);

/// What a failure message says about a group, shared by its pending work.
struct GroupInfo {
  std::string transport;  ///< "gloo", "nccl"
  std::string name;       ///< "world", a new_group() tag
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{600'000};
  /// The run's store, where a launcher leaves store_keys::kFailure (may be null).
  std::shared_ptr<Store> store;
};

/// The launcher's one-line failure report from `store`, or "" when there is none within
/// ~3 s (the launcher notices a dead worker a moment after its peers do). Never blocks
/// longer, even when the store's host is gone.
std::string launcher_report(const std::shared_ptr<Store>& store);

/// Throws RuntimeError "<transport> <op> on group '<name>' (rank r of n) failed: <message>"
/// plus what the launcher reported, or a hint that a peer probably died.
[[noreturn]] void throw_collective_failure(const GroupInfo& group, const std::string& op,
                                           const std::string& message);

}  // namespace shardkit
