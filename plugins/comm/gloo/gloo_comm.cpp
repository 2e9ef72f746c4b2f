// GlooComm: init (store, rendezvous, device, world group), sub-groups, launcher-side stores.
#include "gloo_comm.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <shardkit/error.hpp>

#include "c10d_errors.hpp"
#include "gloo_device.hpp"
#include "gloo_group.hpp"
#include "rendezvous.hpp"

namespace shardkit::gloo {

GlooComm::GlooComm(const PluginContext& context) : log_(context.logger) {}

GlooComm::~GlooComm() = default;

void GlooComm::require_init(const char* what) const {
  if (!initialized_)
    throw RuntimeError(std::string("comm 'gloo': ") + what + " needs init() first");
}

void GlooComm::init(const CommInit& init) {
  if (initialized_) throw RuntimeError("comm 'gloo': init() was already called");
  if (init.world_size < 1 || init.rank < 0 || init.rank >= init.world_size)
    throw ConfigError("comm 'gloo': rank " + std::to_string(init.rank) + " of world size " +
                      std::to_string(init.world_size) + " is not a valid place in the run");
  if (init.timeout.count() <= 0)
    throw ConfigError("comm 'gloo': the timeout must be positive, got " +
                      std::to_string(init.timeout.count()) + " ms");
  init_ = init;
  store_ = join_run_store(init, log_);
  wait_for_all_ranks(*store_, init);
  if (log_) log_->debug("gloo: all {} ranks arrived", init.world_size);
  if (init.world_size == 1) {
    world_ = make_local_group("world");
  } else {
    device_ = make_device(init.socket_ifname, init.master_addr, init.master_port, log_);
    world_ = make_group(store_->prefixed("shardkit/world"), "world", init.rank, init.world_size);
  }
  initialized_ = true;
}

std::shared_ptr<CommGroup> GlooComm::make_group(const std::shared_ptr<GlooStore>& store,
                                                const std::string& name, int rank, int size) {
  auto options = c10d::ProcessGroupGloo::Options::create(init_.timeout);
  options->devices.push_back(device_);
  auto info = std::make_shared<GroupInfo>();
  info->name = name;
  info->rank = rank;
  info->size = size;
  info->timeout = init_.timeout;
  info->store = store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  try {
    pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store->c10d_store(), rank, size, options);
  } catch (...) {
    throw RuntimeError("gloo cannot connect group '" + name + "' (rank " + std::to_string(rank) +
                       " of " + std::to_string(size) + ") within " + seconds_text(init_.timeout) +
                       ": " + current_message() +
                       "; a peer probably exited, or the nodes cannot reach each other "
                       "(set GLOO_SOCKET_IFNAME to the interface that connects them)");
  }
  if (log_) log_->debug("gloo: group '{}' connected (rank {} of {})", name, rank, size);
  return std::make_shared<GlooGroup>(std::move(pg), std::move(info));
}

std::shared_ptr<CommGroup> GlooComm::world() {
  require_init("world()");
  return world_;
}

std::shared_ptr<CommGroup> GlooComm::new_group(const std::vector<int>& ranks,
                                               const std::string& tag) {
  require_init("new_group()");
  std::string listed;
  for (const int r : ranks) listed += (listed.empty() ? "" : ", ") + std::to_string(r);
  const auto describe = "new_group('" + tag + "', ranks [" + listed + "])";
  if (tag.empty()) throw ConfigError(describe + ": the tag is empty; give each group a unique tag");
  int position = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= init_.world_size)
      throw ConfigError(describe + ": rank " + std::to_string(ranks[i]) +
                        " is outside the world of " + std::to_string(init_.world_size));
    if (i > 0 && ranks[i] <= ranks[i - 1])
      throw ConfigError(describe + ": ranks must be sorted and distinct");
    if (ranks[i] == init_.rank) position = static_cast<int>(i);
  }
  if (position < 0)
    throw ConfigError(describe + ": this process (rank " + std::to_string(init_.rank) +
                      ") is not a member; only the members call new_group");
  if (ranks.size() == 1) return make_local_group(tag);
  return make_group(store_->prefixed("shardkit/group/" + tag), tag, position,
                    static_cast<int>(ranks.size()));
}

std::shared_ptr<shardkit::Store> GlooComm::store() {
  require_init("store()");
  return store_;
}

std::shared_ptr<shardkit::Store> GlooComm::host_store(int port, std::chrono::milliseconds timeout) {
  return host_tcp_store(port, timeout,
                        "cannot host the rendezvous store: port " + std::to_string(port) +
                            " is already in use on this machine: another run is using it; "
                            "choose another port (shardkit-run --master-port=0 picks a free one)",
                        &bound_port_);
}

std::shared_ptr<shardkit::Store> GlooComm::connect_store(const std::string& host, int port,
                                                         std::chrono::milliseconds timeout) {
  return connect_tcp_store(host, port, timeout, "the launcher on the first node hosts it");
}

}  // namespace shardkit::gloo
