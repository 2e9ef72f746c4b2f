// Rendezvous: hosting or joining the store, the node barrier, restart barrier and exit barrier.
#include "rendezvous.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "comm_plugin.hpp"
#include "shardkit/error.hpp"

namespace shardkit::run {
namespace {
using Clock = std::chrono::steady_clock;

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

/// Whether something already listens on `port` (a bind on every interface fails).
bool port_in_use(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool busy = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0;
  ::close(fd);
  return busy;
}

std::string topology(const LaunchOptions& o) {
  return "--nnodes=" + std::to_string(o.nnodes) + " --nproc-per-node=" +
         std::to_string(o.nproc_per_node) + " --max-restarts=" + std::to_string(o.max_restarts) +
         " --rdzv-id=" + o.run_id;
}

std::string node_key(int node) { return "launcher/" + std::to_string(node); }

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "unknown";
  return name;
}

Rendezvous::Rendezvous(const LaunchOptions& options)
    : options_(options), master_addr_(options.master_addr) {
  comm_ = load_comm_plugin(registry_);
  const auto timeout = millis(options.timeout_s);
  const std::string where = options.master_addr + ":" + std::to_string(options.master_port);
  if (options.node_rank == 0) {
    try {
      store_ = comm_->host_store(options.master_port, timeout);
    } catch (const std::exception& e) {
      if (options.master_port != 0 && port_in_use(options.master_port)) {
        const std::string fix =
            options.nnodes == 1
                ? "pass --master-port=0 (or --standalone) to let the launcher pick a free port"
                : "choose another port and give it to every node's " + options.port_flag;
        throw RuntimeError(options.port_flag + ": port " + std::to_string(options.master_port) +
                           " is already in use on this host, so node 0 cannot host the "
                           "rendezvous store there (another run, or a launcher still shutting "
                           "down?); " + fix);
      }
      throw RuntimeError("cannot host the rendezvous store on port " +
                         std::to_string(options.master_port) + ": " + e.what());
    }
    master_port_ = comm_->bound_port();
    return;
  }
  master_port_ = options.master_port;
  // Node 0's launcher may start later than this one: keep trying until the timeout.
  const auto deadline = Clock::now() + timeout;
  std::string last_error;
  while (!store_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      throw RuntimeError("node " + std::to_string(options.node_rank) +
                         " could not reach the rendezvous store at " + where + " within " +
                         seconds_text(options.timeout_s) +
                         " s; is node 0's launcher running with the same " + options.port_flag +
                         "? (last error: " + last_error + ")");
    try {
      store_ = comm_->connect_store(options.master_addr, options.master_port, left);
    } catch (const std::exception& e) {
      last_error = e.what();
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

Rendezvous::~Rendezvous() = default;

void Rendezvous::wait_for_nodes(const std::string& key_prefix, const std::string& what,
                                const std::string& hint) {
  std::vector<std::string> keys;
  for (int node = 0; node < options_.nnodes; ++node)
    keys.push_back(key_prefix + std::to_string(node));
  try {
    store_->wait(keys, millis(options_.timeout_s));
  } catch (const std::exception&) {
    std::string missing;
    for (int node = 0; node < options_.nnodes; ++node) {
      bool present = false;
      try {
        present = store_->check({keys[node]});
      } catch (const std::exception&) {
      }
      if (!present) missing += (missing.empty() ? "" : ", ") + std::to_string(node);
    }
    throw RuntimeError("node(s) " + (missing.empty() ? std::string("?") : missing) +
                       " never " + what + " at " + master_addr_ + ":" +
                       std::to_string(master_port_) + " within " +
                       seconds_text(options_.timeout_s) +
                       " s (--timeout-s); " + hint);
  }
}

void Rendezvous::join_nodes() {
  const int node = options_.node_rank;
  if (store_->add("launcher/count/" + std::to_string(node), 1) > 1)
    throw ConfigError("--node-rank=" + std::to_string(node) +
                      ": another launcher already joined this run as node " +
                      std::to_string(node) + "; give each node its own --node-rank");
  const std::string mine = topology(options_);
  if (node == 0) {
    store_->set("launcher/config", mine);
  } else {
    const std::string theirs = store_->get("launcher/config");
    if (theirs != mine)
      throw ConfigError("node " + std::to_string(node) + " was started with " + mine +
                        " but node 0 with " + theirs + "; give every node the same flags");
  }
  store_->set(node_key(node), host_name());
  wait_for_nodes("launcher/", "joined the rendezvous",
                 "start their launchers with --nnodes=" + std::to_string(options_.nnodes) +
                     ", their own --node-rank and " + options_.port_flag +
                     " pointing here, and check that they can reach this host");
}

void Rendezvous::sync_restart(int attempt) {
  if (options_.nnodes == 1) return;
  const std::string prefix = "launcher/attempt_" + std::to_string(attempt) + "/";
  store_->set(prefix + std::to_string(options_.node_rank), host_name());
  wait_for_nodes(prefix, "got ready for restart " + std::to_string(attempt),
                 "their launchers ended or gave up (every node needs the same --max-restarts; "
                 "a node whose workers had all finished does not restart)");
}

std::shared_ptr<Store> Rendezvous::attempt_store(int attempt) {
  return store_->with_prefix("/worker/attempt_" + std::to_string(attempt));
}

void Rendezvous::finish() {
  if (options_.nnodes == 1) return;
  store_->set("launcher/finished/" + std::to_string(options_.node_rank), host_name());
  if (options_.node_rank == 0)
    wait_for_nodes("launcher/finished/", "finished",
                   "node 0 kept the store up for them until now; their launchers may have been "
                   "killed");
}

}  // namespace shardkit::run
