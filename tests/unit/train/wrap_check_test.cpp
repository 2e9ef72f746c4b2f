// wrap_modules() naming a class that no module of the policy has is reported, naming the known classes.
// LibTorch first: Catch's CHECK must win over glog's.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include <shardkit/policy.hpp>

#include "../../../apps/shardkit-train/src/wrap_check.hpp"

namespace {

struct Inner : torch::nn::Module {
  Inner() { register_module("fc", torch::nn::Linear(2, 2)); }
};

struct TwoNames : shardkit::Policy {
  std::vector<std::string> wanted;
  TwoNames() { register_module("inner", std::make_shared<Inner>()); }
  shardkit::PolicyOutput forward(const shardkit::Batch&) override { return {}; }
  torch::Tensor select_action(const shardkit::Batch&) override { return {}; }
  std::vector<std::string> wrap_modules() const override { return wanted; }
};

}  // namespace

TEST_CASE("wrap check: classes named by wrap_modules must exist in the policy") {
  TwoNames policy;
  const auto inner = policy.named_children()["inner"]->name();
  policy.wanted = {inner};
  CHECK(shardkit::train::wrap_modules_problem(policy, "two").empty());
  policy.wanted = {inner, "MlpBlok"};
  const auto problem = shardkit::train::wrap_modules_problem(policy, "two");
  CHECK(problem.find("wrap_modules() names 'MlpBlok'") != std::string::npos);
  CHECK(problem.find("its classes: ") != std::string::npos);
  CHECK(problem.find(inner) != std::string::npos);
}
