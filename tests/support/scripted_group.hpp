// A pretend two-rank group for unit tests: the other rank's side is scripted, collectives complete at once.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"

namespace shardkit::test {

/// This process's member (rank `rank`) of a two-member group whose other member is scripted.
/// An all_reduce combines the caller's tensor with the peer's (Sum adds, Avg averages, Max keeps
/// the larger element). The peer's tensor is the next of `script` when the group was built with
/// one (an all_reduce beyond it, or a tensor of another shape, throws), else what `peer` returns
/// (default: the same values as the caller's). A broadcast from the peer writes `root_value` when
/// that is set, else throws; every other collective throws, so that a part doing more than
/// expected fails its test.
class ScriptedGroup : public CommGroup {
 public:
  struct Call {
    std::string op;  ///< "all_reduce:<op>" or "broadcast"
    std::int64_t numel;
  };

  explicit ScriptedGroup(int rank) : rank_(rank) {}
  /// Rank 0, the peer's all-reduce tensors in order.
  explicit ScriptedGroup(std::vector<torch::Tensor> script) : script_(std::move(script)), scripted_(true) {}

  int rank() const override { return rank_; }
  int size() const override { return 2; }
  const std::string& name() const override { return name_; }

  WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool) override {
    calls.push_back({std::string("all_reduce:") + to_string(op), tensor.numel()});
    ops.push_back(op);
    if (on_all_reduce) on_all_reduce();
    const auto other = peer_tensor(tensor);
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
  WorkHandle broadcast(torch::Tensor& tensor, int root, bool) override {
    if (!root_value) return unused("broadcast");
    calls.push_back({"broadcast", tensor.numel()});
    if (root != rank_) tensor.fill_(*root_value);
    return completed_work();
  }
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

  /// Calls whose op starts with `op` ("all_reduce", "broadcast").
  std::size_t count(const std::string& op) const {
    std::size_t n = 0;
    for (const auto& c : calls) n += c.op.rfind(op, 0) == 0;
    return n;
  }
  /// How many scripted all-reduces were consumed.
  std::size_t used() const { return used_; }

  /// What the peer adds to an all-reduce when there is no script.
  std::function<torch::Tensor(const torch::Tensor&)> peer = [](const torch::Tensor& t) { return t.clone(); };
  std::function<void()> on_all_reduce;  ///< runs at each all-reduce, before the peer's part
  std::optional<float> root_value;      ///< what the peer holds in a broadcast from it; unset: refused
  std::vector<Call> calls;
  std::vector<ReduceOp> ops;            ///< the reductions asked for, in order

 private:
  torch::Tensor peer_tensor(const torch::Tensor& mine) {
    if (!scripted_) return peer(mine);
    if (used_ >= script_.size())
      throw RuntimeError("ScriptedGroup: all_reduce #" + std::to_string(used_ + 1) + " was not scripted");
    auto other = script_[used_++].to(mine.scalar_type());
    if (!other.sizes().equals(mine.sizes()))
      throw RuntimeError("ScriptedGroup: the peer's tensor of all_reduce #" + std::to_string(used_) +
                         " has another shape than the caller's");
    return other;
  }
  WorkHandle unused(const std::string& what) { throw RuntimeError("ScriptedGroup: unexpected " + what); }

  int rank_ = 0;
  std::vector<torch::Tensor> script_;
  bool scripted_ = false;
  std::size_t used_ = 0;
  std::string name_ = "scripted";
};

/// A transport whose world is a ScriptedGroup (for building a DeviceMesh of two).
class ScriptedComm : public Comm {
 public:
  explicit ScriptedComm(std::shared_ptr<ScriptedGroup> group) : group_(std::move(group)) {}
  void init(const CommInit&) override {}
  std::shared_ptr<CommGroup> world() override { return group_; }
  std::shared_ptr<CommGroup> new_group(const std::vector<int>&, const std::string&) override {
    throw RuntimeError("ScriptedComm: unexpected new_group");
  }
  std::shared_ptr<Store> store() override { return nullptr; }
  std::shared_ptr<Store> host_store(int, std::chrono::milliseconds) override { return nullptr; }
  std::shared_ptr<Store> connect_store(const std::string&, int, std::chrono::milliseconds) override {
    return nullptr;
  }
  int bound_port() const override { return 0; }

 private:
  std::shared_ptr<ScriptedGroup> group_;
};

}  // namespace shardkit::test
