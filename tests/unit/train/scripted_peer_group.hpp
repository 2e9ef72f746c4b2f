// A pretend two-rank group for unit tests of the trainer's collective parts: rank 1's side is scripted.
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"

namespace shardkit::test {

/// Rank 0 of a two-member group whose rank 1 is scripted: the n-th all_reduce combines the
/// caller's tensor with `peer[n]` (Sum adds, Avg averages, Max keeps the larger element).
/// Collectives complete at once. Any other collective, an all_reduce beyond the script, or a
/// peer tensor of another shape throws, so that a part doing more than expected fails its test.
class ScriptedPeerGroup : public CommGroup {
 public:
  explicit ScriptedPeerGroup(std::vector<torch::Tensor> peer) : peer_(std::move(peer)) {}

  int rank() const override { return 0; }
  int size() const override { return 2; }
  const std::string& name() const override { return name_; }

  WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool) override {
    if (used_ >= peer_.size())
      throw RuntimeError("ScriptedPeerGroup: all_reduce #" + std::to_string(used_ + 1) + " was not scripted");
    const auto other = peer_[used_++].to(tensor.scalar_type());
    if (!other.sizes().equals(tensor.sizes()))
      throw RuntimeError("ScriptedPeerGroup: the peer's tensor of all_reduce #" + std::to_string(used_) +
                         " has another shape than the caller's");
    ops_.push_back(op);
    switch (op) {
      case ReduceOp::Sum:
        tensor.add_(other);
        break;
      case ReduceOp::Avg:
        tensor.add_(other).div_(2);
        break;
      case ReduceOp::Max:
        tensor.copy_(torch::maximum(tensor, other));
        break;
    }
    return completed_work();
  }
  WorkHandle broadcast(torch::Tensor&, int, bool) override { return unused("broadcast"); }
  WorkHandle all_gather(torch::Tensor&, const torch::Tensor&, bool) override { return unused("all_gather"); }
  WorkHandle reduce_scatter(torch::Tensor&, const torch::Tensor&, ReduceOp, bool) override {
    return unused("reduce_scatter");
  }
  void barrier() override { unused("barrier"); }
  std::vector<std::string> all_gather_bytes(const std::string&) override {
    unused("all_gather_bytes");
    return {};
  }
  Support supports(CommOp, torch::ScalarType) const override { return Support::Native; }

  /// How many scripted all-reduces were consumed.
  std::size_t used() const { return used_; }
  /// The reductions asked for, in order.
  const std::vector<ReduceOp>& ops() const { return ops_; }

 private:
  WorkHandle unused(const std::string& what) { throw RuntimeError("ScriptedPeerGroup: unexpected " + what); }

  std::vector<torch::Tensor> peer_;
  std::size_t used_ = 0;
  std::vector<ReduceOp> ops_;
  std::string name_ = "scripted-peer";
};

}  // namespace shardkit::test
