// The nccl transport: c10d's ProcessGroupNCCL on the shared c10d comm machinery (CUDA tensors).
#pragma once

#include <c10d_comm.hpp>

namespace shardkit::nccl {

/// Each rank drives one GPU: the CommInit's device ("cuda:<LOCAL_RANK>" from the trainer).
/// Collectives run on NCCL's own streams; Work::wait() makes the caller's current stream
/// wait for them through CUDA events, without blocking the host.
class NcclComm final : public c10d_common::C10dComm {
 public:
  explicit NcclComm(const PluginContext& context);
  ~NcclComm() override;

 private:
  torch::Device prepare(const CommInit& init) override;
  c10::intrusive_ptr<c10d::Backend> make_backend(
      const std::shared_ptr<c10d_common::C10dStore>& store, int rank, int size) override;

  torch::Device device_{torch::kCUDA, 0};
};

}  // namespace shardkit::nccl
