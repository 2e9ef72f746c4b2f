// shardkit::Store over a c10d store (TCPStore, PrefixStore), and hosting or joining a TCPStore.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <spdlog/logger.h>

#include <shardkit/comm.hpp>

namespace shardkit::c10d_common {

/// A c10d store behind the SDK interface. Blocking waits poll check() instead of using
/// c10d's own timed wait: a timed-out TCPStore wait leaves a stale reply on the socket,
/// and polling lets the caller learn which keys are missing. set() returns once the
/// server holds the key (c10d's returns before), so a peer told afterwards sees it.
class C10dStore final : public shardkit::Store {
 public:
  /// `where` is "host:port" for messages; `prefix` what with_prefix() added so far.
  C10dStore(c10::intrusive_ptr<c10d::Store> store, std::string where,
            std::chrono::milliseconds timeout, std::string prefix = "");

  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  std::shared_ptr<shardkit::Store> with_prefix(const std::string& prefix) override;

  /// The same store with a prefix, typed (for building process groups on it).
  std::shared_ptr<C10dStore> prefixed(const std::string& prefix) const;
  /// The keys of `keys` that do not exist yet.
  std::vector<std::string> missing(const std::vector<std::string>& keys);

  const c10::intrusive_ptr<c10d::Store>& c10d_store() const { return store_; }
  const std::string& where() const { return where_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  std::string full_key(const std::string& key) const;
  [[noreturn]] void fail(const std::string& what, const std::string& key) const;

  c10::intrusive_ptr<c10d::Store> store_;
  std::string where_;
  std::chrono::milliseconds timeout_;
  std::string prefix_;
};

/// Hosts a TCPStore server on `port` of every interface (0 = a free port) and stores
/// the port it bound in `bound_port`. Throws RuntimeError(`busy_message`) when the port
/// is taken.
std::shared_ptr<C10dStore> host_tcp_store(int port, std::chrono::milliseconds timeout,
                                          const std::string& busy_message, int* bound_port);
/// Joins the TCPStore at host:port, retrying until `timeout` while nobody listens yet.
/// `who_hosts` completes the message when it cannot be reached ("rank 0 hosts it").
std::shared_ptr<C10dStore> connect_tcp_store(const std::string& host, int port,
                                             std::chrono::milliseconds timeout,
                                             const std::string& who_hosts);

/// The run's store. With init.use_agent_store, the launcher's TCPStore joined as a client
/// under "/worker/attempt_<restart_count>" (what torch.distributed does under torchrun);
/// otherwise rank 0 hosts it at master_port and the others join it. `transport` names
/// the plugin in debug lines.
std::shared_ptr<C10dStore> join_run_store(const std::string& transport, const CommInit& init,
                                          const std::shared_ptr<spdlog::logger>& log);

}  // namespace shardkit::c10d_common
