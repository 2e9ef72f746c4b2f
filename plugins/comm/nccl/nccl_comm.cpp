// NcclComm: the rank's GPU, and one ProcessGroupNCCL per group bound to it.
#include "nccl_comm.hpp"

#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include <shardkit/error.hpp>


namespace shardkit::nccl {
namespace {

const c10d_common::TransportTraits kNccl{"nccl", torch::kCUDA,
                                         "use the gloo comm plugin for CPU tensors",
                                         c10d_common::WaitKind::Stream, /*moves_bool=*/false,
                                         /*backend_for_one=*/true,
                                         /*reduce_scatter_is_all_reduce=*/false};

}  // namespace

NcclComm::NcclComm(const PluginContext& context) : C10dComm(context, kNccl) {}

NcclComm::~NcclComm() = default;

torch::Device NcclComm::prepare(const CommInit& init) {
  if (init.device.rfind("cuda", 0) != 0)
    throw ConfigError("comm 'nccl': this rank computes on " + init.device +
                      ", and NCCL moves CUDA tensors only; use --distributed.comm=gloo (or "
                      "auto) for CPU tensors, or --policy.device=cuda");
  const int visible = static_cast<int>(c10::cuda::device_count());
  if (visible == 0)
    throw ConfigError("comm 'nccl': no CUDA device is visible to this process (rank " +
                      std::to_string(init.rank) +
                      "); check CUDA_VISIBLE_DEVICES and the driver (nvidia-smi)");
  const torch::Device device(init.device);
  const int index = device.has_index() ? device.index() : 0;
  if (index >= visible)
    throw ConfigError("comm 'nccl': rank " + std::to_string(init.rank) + " wants " +
                      init.device + " but only " + std::to_string(visible) +
                      " CUDA device(s) are visible; start at most that many processes per node "
                      "(--nproc-per-node) or widen CUDA_VISIBLE_DEVICES");
  device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  c10::cuda::set_device(device_.index());
  return device_;
}

c10::intrusive_ptr<c10d::Backend> NcclComm::make_backend(
    const std::shared_ptr<c10d_common::C10dStore>& store, int rank, int size) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = init_options().timeout;
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store->c10d_store(), rank, size, options);
  // Bound to this rank's GPU: communicators are created for it, not guessed from the
  // first tensor, and barrier() knows its device.
  pg->setBoundDeviceId(device_);
  return pg;
}

}  // namespace shardkit::nccl
