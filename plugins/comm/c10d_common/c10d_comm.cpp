// C10dComm: init (store, rendezvous, world group), sub-groups, launcher-side stores.
#include "c10d_comm.hpp"

#include <shardkit/comm_support.hpp>
#include <shardkit/error.hpp>

#include "c10d_errors.hpp"

namespace shardkit::c10d_common {

C10dComm::C10dComm(const PluginContext& context, const TransportTraits& traits)
    : log_(context.logger), traits_(traits) {}

C10dComm::~C10dComm() = default;

void C10dComm::require_init(const char* what) const {
  if (!initialized_)
    throw RuntimeError("comm '" + traits_.name + "': " + what + " needs init() first");
}

void C10dComm::init(const CommInit& init) {
  if (initialized_) throw RuntimeError("comm '" + traits_.name + "': init() was already called");
  check_comm_init(traits_.name, init);
  init_ = init;
  device_ = prepare(init);
  store_ = join_run_store(traits_.name, init, log_);
  wait_for_all_ranks(*store_, init);
  if (log_) log_->debug("{}: all {} ranks arrived", traits_.name, init.world_size);
  world_ = init.world_size == 1 && !traits_.backend_for_one
               ? make_local_group("world")
               : make_group(store_->prefixed("shardkit/world"), "world", init.rank,
                            init.world_size);
  initialized_ = true;
}

std::shared_ptr<CommGroup> C10dComm::make_group(const std::shared_ptr<C10dStore>& store,
                                                const std::string& name, int rank, int size) {
  auto info = std::make_shared<GroupInfo>();
  info->transport = traits_.name;
  info->name = name;
  info->rank = rank;
  info->size = size;
  info->timeout = init_.timeout;
  info->store = store_;
  c10::intrusive_ptr<c10d::Backend> backend;
  try {
    backend = make_backend(store, rank, size);
  } catch (const Error&) {
    throw;
  } catch (...) {
    throw RuntimeError(traits_.name + " cannot connect group '" + name + "' (rank " +
                       std::to_string(rank) + " of " + std::to_string(size) + ") within " +
                       seconds_text(init_.timeout) + ": " + current_message() +
                       "; a peer probably exited, or the nodes cannot reach each other");
  }
  if (log_) log_->debug("{}: group '{}' connected (rank {} of {})", traits_.name, name, rank, size);
  return std::make_shared<C10dGroup>(std::move(backend), std::move(info), traits_, device_);
}

std::shared_ptr<CommGroup> C10dComm::world() {
  require_init("world()");
  return world_;
}

std::shared_ptr<CommGroup> C10dComm::new_group(const std::vector<int>& ranks,
                                               const std::string& tag) {
  require_init("new_group()");
  const int position = group_position(traits_.name, ranks, tag, init_);
  if (ranks.size() == 1 && !traits_.backend_for_one) return make_local_group(tag);
  return make_group(store_->prefixed("shardkit/group/" + tag), tag, position,
                    static_cast<int>(ranks.size()));
}

std::shared_ptr<shardkit::Store> C10dComm::store() {
  require_init("store()");
  return store_;
}

std::shared_ptr<shardkit::Store> C10dComm::host_store(int port, std::chrono::milliseconds timeout) {
  return host_tcp_store(port, timeout,
                        "cannot host the rendezvous store: port " + std::to_string(port) +
                            " is already in use on this machine: another run is using it; "
                            "choose another port (shardkit-run --master-port=0 picks a free one)",
                        &bound_port_);
}

std::shared_ptr<shardkit::Store> C10dComm::connect_store(const std::string& host, int port,
                                                         std::chrono::milliseconds timeout) {
  return connect_tcp_store(host, port, timeout, "the launcher on the first node hosts it");
}

}  // namespace shardkit::c10d_common
