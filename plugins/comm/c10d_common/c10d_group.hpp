// One CommGroup over any c10d Backend (ProcessGroupGloo, ProcessGroupNCCL), shaped by a transport's table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <shardkit/comm.hpp>
#include <shardkit/comm_support.hpp>

#include "c10d_work.hpp"

namespace shardkit::c10d_common {

/// What differs between c10d transports, as data.
struct TransportTraits {
  std::string name;               ///< "gloo"
  c10::DeviceType device_type;    ///< where tensors must live (kCPU, kCUDA)
  std::string wrong_device_hint;  ///< "use the nccl comm plugin for CUDA tensors"
  WaitKind wait_kind;
  bool moves_bool;                ///< bool tensors are moved as themselves (else as uint8)
  /// A group of one process still runs through the transport (NCCL: so that one GPU
  /// exercises it); otherwise it is make_local_group()'s identity.
  bool backend_for_one;
  /// The transport's reduce-scatter is an all-reduce of a copy of the input, then a copy of
  /// this member's chunk (Gloo): reduce_scatter_in_place() runs that all-reduce in the caller's
  /// buffer instead, with the same traffic and neither copy.
  bool reduce_scatter_is_all_reduce;
};

/// supports() from the dtype table (dtype_table.hpp): Native when the dtype is moved or
/// reduced as itself, Emulated through another dtype, Unsupported when refused.
Support support_from_traits(const TransportTraits& traits, CommOp op, torch::ScalarType dtype);

/// One process group. AVG on floating dtypes is the transport's own; on integers it is
/// a sum followed by a local truncating division (no extra traffic). Steps that follow
/// the transfer (the division, the copy back from a widened dtype) run in Work::wait().
class C10dGroup final : public CommGroup {
 public:
  C10dGroup(c10::intrusive_ptr<c10d::Backend> backend, std::shared_ptr<const GroupInfo> info,
            const TransportTraits& traits, torch::Device device);
  ~C10dGroup() override;

  int rank() const override { return info_->rank; }
  int size() const override { return info_->size; }
  const std::string& name() const override { return info_->name; }

  WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool async) override;
  WorkHandle broadcast(torch::Tensor& tensor, int root, bool async) override;
  WorkHandle all_gather(torch::Tensor& output, const torch::Tensor& input, bool async) override;
  WorkHandle reduce_scatter(torch::Tensor& output, const torch::Tensor& input, ReduceOp op,
                            bool async) override;
  WorkHandle reduce_scatter_in_place(torch::Tensor& buffer, ReduceOp op, bool async) override;
  void barrier() override;
  std::vector<std::string> all_gather_bytes(const std::string& mine) override;
  Support supports(CommOp op, torch::ScalarType dtype) const override;

 private:
  void require(CommOp op, const torch::Tensor& tensor, const char* role) const;
  /// `whole` (the `role` tensor) must hold size() x `part`'s elements, of `part`'s dtype.
  void require_size_times(CommOp op, const char* role, const torch::Tensor& whole,
                          const torch::Tensor& part) const;
  [[noreturn]] void misuse(CommOp op, const std::string& problem) const;
  WorkHandle start(CommOp op, const std::function<c10::intrusive_ptr<c10d::Work>()>& launch,
                   std::function<void()> finish, bool async);

  c10::intrusive_ptr<c10d::Backend> backend_;
  std::shared_ptr<const GroupInfo> info_;
  const TransportTraits& traits_;
  torch::Device device_;
};

}  // namespace shardkit::c10d_common
