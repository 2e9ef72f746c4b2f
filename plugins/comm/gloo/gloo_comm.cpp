// GlooComm: the Gloo device (bound once per process) and one ProcessGroupGloo per group.
#include "gloo_comm.hpp"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>
#include <string>

#include <shardkit/comm_support.hpp>
#include <shardkit/error.hpp>

#include <c10d_errors.hpp>

#include "gloo_device.hpp"

namespace shardkit::gloo {
namespace {

const c10d_common::TransportTraits kGloo{"gloo", torch::kCPU,
                                         "use the nccl comm plugin for CUDA tensors",
                                         c10d_common::WaitKind::Host, /*moves_bool=*/true,
                                         /*backend_for_one=*/false,
                                         /*reduce_scatter_is_all_reduce=*/true};

}  // namespace

GlooComm::GlooComm(const PluginContext& context) : C10dComm(context, kGloo) {}

GlooComm::~GlooComm() = default;

torch::Device GlooComm::prepare(const CommInit& init) {
  if (init.device != "cpu" && !init.device.empty())
    throw ConfigError("comm 'gloo': this rank computes on " + init.device +
                      ", and gloo moves CPU tensors only; use --distributed.comm=nccl (or auto) "
                      "for CUDA, or --policy.device=cpu");
  // The device (listening address) is bound once per process, before the rendezvous: a
  // wrong interface then fails on every rank alike, not only on those that reach it first.
  if (init.world_size > 1) {
    // The interface: the one the host program set, else GLOO_SOCKET_IFNAME (as PyTorch's).
    std::string ifname = init.socket_ifname;
    if (const char* env = std::getenv("GLOO_SOCKET_IFNAME"); ifname.empty() && env) ifname = env;
    device_ = make_device(ifname, init.master_addr, init.master_port, log());
  }
  return torch::Device(torch::kCPU);
}

c10::intrusive_ptr<c10d::Backend> GlooComm::make_backend(
    const std::shared_ptr<c10d_common::C10dStore>& store, int rank, int size) {
  const auto& init = init_options();
  if (!device_) throw RuntimeError("comm 'gloo': a group of " + std::to_string(size) +
                                   " ranks needs the device that init() binds for a world of "
                                   "more than one rank");
  auto options = c10d::ProcessGroupGloo::Options::create(init.timeout);
  options->devices.push_back(device_);
  try {
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store->c10d_store(), rank, size, options);
  } catch (...) {
    throw RuntimeError("gloo cannot connect (rank " + std::to_string(rank) + " of " +
                       std::to_string(size) + ") within " + seconds_text(init.timeout) + ": " +
                       c10d_common::current_message() +
                       "; a peer probably exited, or the nodes cannot reach each other "
                       "(set GLOO_SOCKET_IFNAME to the interface that connects them)");
  }
}

}  // namespace shardkit::gloo
