// CommGroup over a c10d ProcessGroupGloo, with the emulations Gloo 1.13 needs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <shardkit/comm.hpp>

#include "gloo_work.hpp"

namespace shardkit::gloo {

/// One Gloo process group. What Gloo 1.13 lacks is emulated (see gloo_support()):
/// AVG = SUM then a local division; float16/bfloat16/int16 reductions run on a widened
/// copy; all-gather into one tensor gathers into views of it; reduce-scatter is an
/// all-reduce of a copy (twice the bytes of a ring reduce-scatter) keeping this rank's
/// chunk. Emulation steps that follow the transfer run in Work::wait().
class GlooGroup final : public CommGroup {
 public:
  GlooGroup(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg, std::shared_ptr<const GroupInfo> info);
  ~GlooGroup() override;

  int rank() const override { return info_->rank; }
  int size() const override { return info_->size; }
  const std::string& name() const override { return info_->name; }

  WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool async) override;
  WorkHandle broadcast(torch::Tensor& tensor, int root, bool async) override;
  WorkHandle all_gather(torch::Tensor& output, const torch::Tensor& input, bool async) override;
  WorkHandle reduce_scatter(torch::Tensor& output, const torch::Tensor& input, ReduceOp op,
                            bool async) override;
  void barrier() override;
  std::vector<std::string> all_gather_bytes(const std::string& mine) override;
  Support supports(CommOp op, torch::ScalarType dtype) const override;

 private:
  void require(CommOp op, const torch::Tensor& tensor, const char* role) const;
  [[noreturn]] void misuse(CommOp op, const std::string& problem) const;
  WorkHandle start(CommOp op, const std::function<c10::intrusive_ptr<c10d::Work>()>& launch,
                   std::function<void()> finish, bool async);

  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  std::shared_ptr<const GroupInfo> info_;
};

}  // namespace shardkit::gloo
