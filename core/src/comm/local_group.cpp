// The group of one process: every collective is the identity (or a local copy) and completes at once.
#include <string>

#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

class LocalGroup final : public CommGroup {
 public:
  explicit LocalGroup(std::string name) : name_(std::move(name)) {}

  int rank() const override { return 0; }
  int size() const override { return 1; }
  const std::string& name() const override { return name_; }

  WorkHandle all_reduce(torch::Tensor&, ReduceOp, bool) override { return completed_work(); }
  WorkHandle broadcast(torch::Tensor&, int root, bool) override {
    if (root != 0)
      throw RuntimeError("broadcast on group '" + name_ + "' (1 member) from root " +
                         std::to_string(root) + ": the only rank is 0");
    return completed_work();
  }
  WorkHandle all_gather(torch::Tensor& output, const torch::Tensor& input, bool) override {
    copy_whole("all_gather", output, input);
    return completed_work();
  }
  WorkHandle reduce_scatter(torch::Tensor& output, const torch::Tensor& input, ReduceOp,
                            bool) override {
    copy_whole("reduce_scatter", output, input);
    return completed_work();
  }
  void barrier() override {}
  std::vector<std::string> all_gather_bytes(const std::string& mine) override { return {mine}; }
  Support supports(CommOp, torch::ScalarType) const override { return Support::Native; }

 private:
  // With one member, output and input hold the same elements.
  void copy_whole(const char* op, torch::Tensor& output, const torch::Tensor& input) const {
    if (output.numel() != input.numel() || output.scalar_type() != input.scalar_type())
      throw RuntimeError(std::string(op) + " on group '" + name_ + "' (1 member): output has " +
                         std::to_string(output.numel()) + " elements of " +
                         c10::toString(output.scalar_type()) + ", input " +
                         std::to_string(input.numel()) + " of " +
                         c10::toString(input.scalar_type()) + "; they must match");
    if (!output.is_same(input)) output.view(-1).copy_(input.reshape(-1));
  }

  std::string name_;
};

}  // namespace

std::shared_ptr<CommGroup> make_local_group(const std::string& name) {
  return std::make_shared<LocalGroup>(name);
}

}  // namespace shardkit
