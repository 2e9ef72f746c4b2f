// The launcher's side of the rendezvous: node 0 hosts the store, other nodes join it, all meet.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "launch_options.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/loader.hpp"

namespace shardkit::run {

/// The store every launcher and worker of a run shares, hosted by node 0's launcher as
/// torchrun's agent does. Keys at the root: "launcher/<node>" (host name), "launcher/config",
/// "launcher/attempt_<n>/<node>" (restart barrier), "launcher/finished/<node>"; each
/// attempt's workers use the prefix "/worker/attempt_<n>".
class Rendezvous {
 public:
  /// Loads the comm plugin and hosts the store (node 0) or connects to it, retrying until
  /// --timeout-s. Throws shardkit::RuntimeError naming the port and the fix when node 0's
  /// port is taken, or the endpoint when it cannot be reached.
  explicit Rendezvous(const LaunchOptions& options);
  ~Rendezvous();

  /// What workers get as MASTER_ADDR / MASTER_PORT (the port actually bound on node 0).
  const std::string& master_addr() const { return master_addr_; }
  int master_port() const { return master_port_; }

  /// Records this node and waits for all --nnodes launchers (checking that they were
  /// given the same topology). On timeout, names the nodes that never arrived.
  void join_nodes();
  /// With several nodes: waits until every launcher is ready to start attempt `attempt`.
  void sync_restart(int attempt);
  /// The store under "/worker/attempt_<attempt>".
  std::shared_ptr<Store> attempt_store(int attempt);
  /// Marks this node finished; node 0 then keeps the store up until every node finished
  /// (bounded by --timeout-s) so that late launchers can still read it.
  void finish();

 private:
  /// Waits for "<key_prefix><node>" of every node; the error names the missing nodes,
  /// says they never `what`, and ends with `hint`.
  void wait_for_nodes(const std::string& key_prefix, const std::string& what,
                      const std::string& hint);
  LaunchOptions options_;
  Registry registry_;
  std::shared_ptr<Comm> comm_;
  std::shared_ptr<Store> store_;
  std::string master_addr_;
  int master_port_ = 0;
};

/// This machine's host name ("unknown" if it has none).
std::string host_name();

}  // namespace shardkit::run
