// DDP through the launcher reproduces the single-process loss curve (fp32, Gloo over loopback).
#include <catch2/catch.hpp>

#include <cmath>

#include "launch.hpp"

using namespace shardkit::test;

namespace {
// Stated tolerance: DDP averages per-rank mean gradients in fp32 while one process
// averages over the whole batch, so sums are taken in another order; after 50 AdamW
// steps the losses agree to about 1e-6 relative. 1e-4 leaves room for other BLAS.
constexpr double kRelTol = 1e-4;

void require_close(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE_FALSE(a.empty());
  const auto worst = worst_relative(a, b);
  INFO("worst relative loss difference " << worst);
  CHECK(worst <= kRelTol);
}
}  // namespace

TEST_CASE("2 ranks x batch 4 reproduce one process x batch 8 for 50 steps") {
  TempDir dir("sk-ddp-eq");
  const auto single = run_program("shardkit-train", tiny_run(dir / "single", {"--steps=50", "--batch_size=8"}));
  INFO(single.output);
  REQUIRE(single.exit_code == 0);
  const auto ddp = launch(2, tiny_run(dir / "ddp", {"--steps=50", "--batch_size=4"}));
  INFO(ddp.output);
  REQUIRE(ddp.exit_code == 0);
  CHECK(contains(ddp.output, "Effective batch size: 4 x 2 dp workers x 1 grad accum = 8 "
                             "(topology: dp_replicate=2, dp_shard=1)"));
  CHECK(contains(ddp.output, "backend ddp"));
  require_close(losses(dir / "ddp"), losses(dir / "single"));
  CHECK(losses(dir / "ddp").back() < 0.5 * losses(dir / "ddp").front());  // and it trained
  // Rank 0 alone wrote the checkpoint; it records the topology.
  const auto step = slurp(dir / "ddp/checkpoints/last/training_state/training_step.json");
  CHECK(contains(step, "\"dp_world_size\": 2"));
  CHECK(contains(step, "\"dp_replicate\": 2"));
  CHECK(contains(step, "\"dp_shard\": 1"));
}

TEST_CASE("3 ranks x batch 4 reproduce one process x batch 12") {
  TempDir dir("sk-ddp-eq3");
  const auto single = run_program("shardkit-train", tiny_run(dir / "single", {"--steps=30", "--batch_size=12"}));
  REQUIRE(single.exit_code == 0);
  const auto ddp = launch(3, tiny_run(dir / "ddp", {"--steps=30", "--batch_size=4"}));
  INFO(ddp.output);
  REQUIRE(ddp.exit_code == 0);
  require_close(losses(dir / "ddp"), losses(dir / "single"));
}

TEST_CASE("with accumulation, 2 ranks x (batch 2, accum 2) match one process x (batch 4, accum 2)") {
  TempDir dir("sk-ddp-acc");
  const std::vector<std::string> accum = {"--steps=50", "--accelerator.gradient_accumulation.steps=2"};
  auto single_args = tiny_run(dir / "single", accum);
  single_args.push_back("--batch_size=4");
  const auto single = run_program("shardkit-train", single_args);
  REQUIRE(single.exit_code == 0);
  auto ddp_args = tiny_run(dir / "ddp", accum);
  ddp_args.push_back("--batch_size=2");
  const auto ddp = launch(2, ddp_args);
  INFO(ddp.output);
  REQUIRE(ddp.exit_code == 0);
  CHECK(contains(ddp.output, "Effective batch size: 2 x 2 dp workers x 2 grad accum = 8"));
  require_close(losses(dir / "ddp"), losses(dir / "single"));
}

TEST_CASE("ddp with small buckets and without overlap gives the same curve") {
  TempDir dir("sk-ddp-buckets");
  const auto a = launch(2, tiny_run(dir / "a", {"--steps=20", "--batch_size=4", "--accelerator.ddp.bucket_cap_mb=0.001"}));
  INFO(a.output);
  REQUIRE(a.exit_code == 0);
  const auto b = launch(2, tiny_run(dir / "b", {"--steps=20", "--batch_size=4", "--accelerator.ddp.overlap=false"}));
  INFO(b.output);
  REQUIRE(b.exit_code == 0);
  require_close(losses(dir / "a"), losses(dir / "b"));
}
