// The store adapter and TCPStore hosting/joining, with messages naming the key, address and timeout.
#include "c10d_store.hpp"

#include <algorithm>
#include <thread>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <shardkit/comm_support.hpp>
#include <shardkit/error.hpp>

#include "c10d_errors.hpp"

namespace shardkit::c10d_common {

C10dStore::C10dStore(c10::intrusive_ptr<c10d::Store> store, std::string where,
                     std::chrono::milliseconds timeout, std::string prefix)
    : store_(std::move(store)), where_(std::move(where)), timeout_(timeout),
      prefix_(std::move(prefix)) {}

std::string C10dStore::full_key(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "/" + key;
}

void C10dStore::fail(const std::string& what, const std::string& key) const {
  throw RuntimeError("store at " + where_ + ": " + what + " of key '" + full_key(key) +
                     "' failed: " + current_message());
}

void C10dStore::set(const std::string& key, const std::string& value) {
  try {
    store_->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    // TCPStore's SET gets no reply; a check on the same connection returns only after the
    // server applied it, so once set() returns every other process sees the key.
    store_->check({key});
  } catch (...) {
    fail("set", key);
  }
}

std::string C10dStore::get(const std::string& key) {
  wait({key}, timeout_);
  try {
    const auto bytes = store_->get(key);
    return std::string(bytes.begin(), bytes.end());
  } catch (...) {
    fail("get", key);
  }
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) {
  try {
    return store_->add(key, delta);
  } catch (...) {
    fail("add", key);
  }
}

bool C10dStore::check(const std::vector<std::string>& keys) {
  try {
    return store_->check(keys);
  } catch (...) {
    fail("check", keys.empty() ? std::string() : keys.front());
  }
}

std::vector<std::string> C10dStore::missing(const std::vector<std::string>& keys) {
  std::vector<std::string> absent;
  for (const auto& key : keys)
    if (!check({key})) absent.push_back(key);
  return absent;
}

void C10dStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string names;
      for (const auto& key : missing(keys)) names += (names.empty() ? "'" : ", '") + full_key(key) + "'";
      throw RuntimeError("store at " + where_ + ": waited " + seconds_text(timeout) +
                         " (the timeout) for key " + names +
                         ", which no process set; a peer probably exited or is stuck before "
                         "setting it");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::shared_ptr<C10dStore> C10dStore::prefixed(const std::string& prefix) const {
  return std::make_shared<C10dStore>(c10::make_intrusive<c10d::PrefixStore>(prefix, store_),
                                     where_, timeout_, full_key(prefix));
}

std::shared_ptr<shardkit::Store> C10dStore::with_prefix(const std::string& prefix) {
  return prefixed(prefix);
}

std::shared_ptr<C10dStore> host_tcp_store(int port, std::chrono::milliseconds timeout,
                                          const std::string& busy_message, int* bound_port) {
  if (port < 0 || port > 65535)
    throw ConfigError("store port " + std::to_string(port) + " is not in 0..65535");
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = true;
  options.waitWorkers = false;  // workers join later; the rendezvous counts them itself
  options.timeout = timeout;
  try {
    // The server listens on every interface; its own client reaches it over loopback.
    auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
    const int bound = store->getPort();
    if (bound_port) *bound_port = bound;
    return std::make_shared<C10dStore>(store, "127.0.0.1:" + std::to_string(bound), timeout);
  } catch (...) {
    const auto message = current_message();
    if (is_address_in_use(message)) throw RuntimeError(busy_message);
    throw RuntimeError("cannot host the rendezvous store on port " + std::to_string(port) +
                       ": " + message);
  }
}

std::shared_ptr<C10dStore> connect_tcp_store(const std::string& host, int port,
                                             std::chrono::milliseconds timeout,
                                             const std::string& who_hosts) {
  if (port <= 0 || port > 65535)
    throw ConfigError("store port " + std::to_string(port) + " is not in 1..65535");
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = timeout;
  const auto where = host + ":" + std::to_string(port);
  try {
    return std::make_shared<C10dStore>(c10::make_intrusive<c10d::TCPStore>(host, options),
                                       where, timeout);
  } catch (...) {
    throw RuntimeError("cannot reach the rendezvous store at " + where + " within " +
                       seconds_text(timeout) + " (" + who_hosts + "): " + current_message());
  }
}

std::shared_ptr<C10dStore> join_run_store(const std::string& transport, const CommInit& init,
                                          const std::shared_ptr<spdlog::logger>& log) {
  const auto where = init.master_addr + ":" + std::to_string(init.master_port);
  if (init.use_agent_store) {
    if (log) log->debug("{}: joining the launcher's store at {}", transport, where);
    auto store = connect_tcp_store(init.master_addr, init.master_port, init.timeout,
                                   "the launcher hosts it (TORCHELASTIC_USE_AGENT_STORE=True); "
                                   "is it still running, and can this node reach it?");
    return store->prefixed("/worker/attempt_" + std::to_string(init.restart_count));
  }
  if (init.rank == 0) {
    if (log) log->debug("{}: rank 0 hosts the store on port {}", transport, init.master_port);
    return host_tcp_store(init.master_port, init.timeout,
                          "MASTER_PORT=" + std::to_string(init.master_port) +
                              " is already in use on " + init.master_addr +
                              ": another run is using it; choose another port (shardkit-run "
                              "--master-port=0 picks a free one)",
                          nullptr);
  }
  if (log) log->debug("{}: joining the store rank 0 hosts at {}", transport, where);
  return connect_tcp_store(init.master_addr, init.master_port, init.timeout,
                           "rank 0 hosts it: check that rank 0 was started and that this node "
                           "can reach MASTER_ADDR:MASTER_PORT");
}

}  // namespace shardkit::c10d_common
