// Step-loss normalisation: mean losses divided by the accumulation steps, summed ones by the step's global count.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../../../apps/shardkit-train/src/step_loss.hpp"
#include "scripted_group.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"
#include "shardkit/policy.hpp"

using shardkit::PolicyOutput;
using shardkit::ReduceOp;
using shardkit::test::ScriptedGroup;
using shardkit::train::StepLoss;

namespace {

PolicyOutput mean_loss(double value) { return PolicyOutput(torch::tensor(value, torch::kFloat64)); }

PolicyOutput summed_loss(double sum, double count) {
  return PolicyOutput(torch::tensor(sum, torch::kFloat64), {}, torch::tensor(count, torch::kFloat64));
}

}  // namespace

TEST_CASE("a mean loss is divided by the accumulation steps", "[train][step_loss]") {
  StepLoss step;
  const auto loss = step.backward_loss(mean_loss(3.0), 4);
  CHECK(loss.item<double>() == 0.75);
  CHECK_FALSE(step.summed());
  CHECK(step.backward_loss(mean_loss(3.0), 1).item<double>() == 3.0);
}

TEST_CASE("summed losses are divided by the count of the whole optimizer step, not per micro-step",
          "[train][step_loss]") {
  auto world = shardkit::make_local_group();
  StepLoss step;
  CHECK_FALSE(step.summed());  // unknown before the first micro-step
  // Two micro-steps of different sizes: 6 over 3 elements (mean 2), then 5 over 1 (mean 5). The
  // step's loss is 11 / 4, where a mean of the micro-steps' means would say 3.5.
  CHECK(step.backward_loss(summed_loss(6.0, 3.0), 2).item<double>() == 6.0);  // back-propagated as it is
  CHECK(step.summed());
  CHECK(step.backward_loss(summed_loss(5.0, 1.0), 2).item<double>() == 5.0);

  auto g = torch::full({3}, 8.0);
  const std::vector<torch::Tensor> grads{g, torch::Tensor()};
  CHECK(step.finish_step(grads, *world) == Approx(11.0 / 4.0));
  CHECK(torch::equal(g, torch::full({3}, 2.0)));  // x D / N = 1 / 4

  // The sums start again at each optimizer step: nothing accumulated is no count at all.
  const double empty = step.finish_step(grads, *world);
  CHECK(std::isnan(empty));
  CHECK(torch::equal(g, torch::full({3}, 2.0)));  // left alone without a count
}

TEST_CASE("summed losses are normalised by the global count over the data-parallel ranks", "[train][step_loss]") {
  // This rank: 6 over 3 elements. The other rank: 10 over 5. Global mean 16 / 8 = 2; the
  // backend averaged the gradients over D = 2 ranks, so they are multiplied by D / N = 2 / 8.
  ScriptedGroup dp({torch::tensor({10.0, 5.0}, torch::kFloat64)});
  StepLoss step;
  step.backward_loss(summed_loss(6.0, 3.0), 1);
  auto g = torch::full({2}, 4.0);
  CHECK(step.finish_step({g}, dp) == 2.0);
  CHECK(torch::equal(g, torch::full({2}, 1.0)));
  REQUIRE(dp.used() == 1);
  CHECK(dp.ops[0] == ReduceOp::Sum);
}

TEST_CASE("a policy that returns a normalizer on some micro-steps only is refused", "[train][step_loss]") {
  {
    StepLoss step;
    step.backward_loss(summed_loss(6.0, 3.0), 2);
    CHECK_THROWS_AS(step.backward_loss(mean_loss(1.0), 2), shardkit::RuntimeError);
  }
  {
    StepLoss step;
    step.backward_loss(mean_loss(1.0), 2);
    CHECK_THROWS_WITH(step.backward_loss(summed_loss(6.0, 3.0), 2),
                      Catch::Contains("the policy returned a loss normalizer on some micro-steps and not on others"));
  }
}
