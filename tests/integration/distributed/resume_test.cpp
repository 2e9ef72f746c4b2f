// Resume under DDP: exact continuation, and a different world size landing on the right data.
#include <catch2/catch.hpp>

#include "launch.hpp"

using namespace shardkit::test;

TEST_CASE("resume under DDP continues exactly") {
  TempDir dir("sk-ddp-resume");
  const auto full = launch(2, tiny_run(dir / "full", {"--steps=40", "--save_freq=20", "--batch_size=4"}));
  INFO(full.output);
  REQUIRE(full.exit_code == 0);
  roll_back_copy(dir / "full", dir / "resumed", "000020");
  const auto resumed = launch(2, {"--resume=true", "--output_dir=" + (dir / "resumed")});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "resumed from"));
  const auto a = read_metrics(dir / "full");
  const auto b = read_metrics(dir / "resumed");
  REQUIRE(a.size() == 40);
  REQUIRE(b.size() == 40);
  for (std::size_t i = 20; i < 40; ++i) {
    CHECK(b[i].step == a[i].step);
    CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));  // the same digits: bit for bit
    CHECK(b[i].raw.at("grad_norm") == a[i].raw.at("grad_norm"));
  }
}

TEST_CASE("resume at another world size lands on the same samples and warns") {
  TempDir dir("sk-ddp-reshape");
  // 2 ranks x batch 4: 20 steps consume 160 samples of the 256-sample epoch.
  const auto two = launch(2, tiny_run(dir / "two", {"--steps=20", "--save_freq=20", "--batch_size=4"}));
  INFO(two.output);
  REQUIRE(two.exit_code == 0);
  // One process x batch 4 continues at global batch 160 / 4 = 40 of epoch 0.
  const auto one = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (dir / "two"), "--steps=24"});
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  CHECK(contains(one.output, "batch_size 4 x 1 dp workers, but the checkpoint was written with batch_size 4 x 2 dp workers"));
  CHECK(contains(one.output, "continuing at epoch 0, batch 40"));
  // 3 ranks x batch 4 (global 12): 160 / 12 = batch 13 of epoch 0.
  roll_back_copy(dir / "two", dir / "three", "000020");
  const auto three = launch(3, {"--resume=true", "--output_dir=" + (dir / "three"), "--steps=24"});
  INFO(three.output);
  REQUIRE(three.exit_code == 0);
  CHECK(contains(three.output, "continuing at epoch 0, batch 13"));
}
