// PolicyOutput::metrics (the mlp policy's "mae") reach metrics.jsonl and the console, averaged across ranks.
#include <catch2/catch.hpp>

#include <cmath>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("policy metrics are logged and reduced across ranks like the loss") {
  TempDir dir("sk-policy-metrics");
  const auto single = run_program("shardkit-train", tiny_run(dir / "single", {"--steps=10", "--batch_size=8"}));
  INFO(single.output);
  REQUIRE(single.exit_code == 0);
  const auto ddp = launch(2, tiny_run(dir / "ddp", {"--steps=10", "--batch_size=4"}));
  INFO(ddp.output);
  REQUIRE(ddp.exit_code == 0);
  CHECK(contains(single.output, " | mae "));
  CHECK(contains(ddp.output, " | mae "));

  const auto one = read_metrics(dir / "single");
  const auto two = read_metrics(dir / "ddp");
  REQUIRE(one.size() == 10);
  REQUIRE(two.size() == 10);
  for (std::size_t i = 0; i < one.size(); ++i) {
    INFO("step " << one[i].step);
    REQUIRE(one[i].raw.count("mae"));
    REQUIRE(two[i].raw.count("mae"));
    CHECK(one[i].number("mae") > 0);
    // The mean over 2 ranks of 4 samples each is the mean over the same 8 samples in one
    // process (the ranks' shares of the batch are equal), up to fp32 summation order.
    CHECK(std::abs(two[i].number("mae") - one[i].number("mae")) <= 1e-4 * one[i].number("mae"));
  }
}
