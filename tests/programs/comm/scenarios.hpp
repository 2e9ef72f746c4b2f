// The scenarios comm_worker runs; each throws on a failed check.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <shardkit/comm.hpp>

namespace comm_worker {

struct Args {
  std::string scenario;
  double timeout_s = 60;
  int port = 0;  ///< host_store: the port to host on
  bool debug = false;
};

/// Every op x dtype with known results, async overlap, bytes, groups, the store.
void collectives(shardkit::Comm& comm);
/// The op x dtype part of collectives(), on one group (collectives.cpp).
void check_every_dtype(shardkit::CommGroup& group);
/// The last rank stops answering; the others' next collective must fail.
void hang(shardkit::Comm& comm, const Args& args);
/// The last rank exits during a large all-reduce; the others must fail.
void exit_early(shardkit::Comm& comm);
/// host_store(port) then connect_store to it: keys cross, prefixes match torchrun's.
void host_store(shardkit::Comm& comm, const Args& args);

}  // namespace comm_worker
