// A group with a shape and no data movement, for memory plans computed in one process.
#include <string>

#include "shardkit/comm.hpp"

namespace shardkit {
namespace {

class PlanningGroup final : public CommGroup {
 public:
  PlanningGroup(std::string name, int size) : name_(std::move(name)), size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  const std::string& name() const override { return name_; }
  WorkHandle all_reduce(torch::Tensor&, ReduceOp, bool) override { return completed_work(); }
  WorkHandle broadcast(torch::Tensor&, int, bool) override { return completed_work(); }
  WorkHandle all_gather(torch::Tensor&, const torch::Tensor&, bool) override { return completed_work(); }
  WorkHandle reduce_scatter(torch::Tensor&, const torch::Tensor&, ReduceOp, bool) override { return completed_work(); }
  WorkHandle reduce_scatter_in_place(torch::Tensor&, ReduceOp, bool) override { return completed_work(); }
  void barrier() override {}
  std::vector<std::string> all_gather_bytes(const std::string& mine) override {
    return std::vector<std::string>(static_cast<std::size_t>(size_), mine);
  }
  Support supports(CommOp, torch::ScalarType) const override { return Support::Native; }

 private:
  std::string name_;
  int size_;
};

}  // namespace

std::shared_ptr<CommGroup> make_planning_group(const std::string& name, int size) {
  return std::make_shared<PlanningGroup>(name, size);
}

}  // namespace shardkit
