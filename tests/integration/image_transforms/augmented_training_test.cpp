// ACT trains with LeRobot's image augmentation on (2 processes through the launcher), reproducibly.
#include <catch2/catch.hpp>

#include <cmath>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

namespace {

std::vector<std::string> act_run(const std::string& out, bool augment) {
  return {"--output_dir=" + out, "--policy.type=act", "--dataset.type=lerobot", "--dataset.repo_id=tiny/video",
          "--dataset.root=" + std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/video",
          "--dataset.image_transforms.enable=" + std::string(augment ? "true" : "false"),
          "--policy.pretrained_backbone_weights=null", "--policy.dim_model=32", "--policy.n_heads=4",
          "--policy.dim_feedforward=64", "--policy.n_encoder_layers=2", "--policy.n_vae_encoder_layers=1",
          "--policy.chunk_size=10", "--policy.n_action_steps=10", "--policy.kl_weight=1", "--steps=8",
          "--batch_size=4", "--log_freq=1", "--save_freq=8", "--optimizer.lr=3e-4", "--seed=3", "--num_threads=1",
          "--distributed.timeout_s=120"};
}

}  // namespace

TEST_CASE("2 processes train ACT with image augmentation; the same seed gives the same losses", "[image_transforms][train]") {
  TempDir dir("sk-augmented-act");
  const auto first = launch(2, act_run(dir / "a", true));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(contains(first.output, "LeRobot image transforms on: up to 3 per camera image"));
  const auto again = launch(2, act_run(dir / "b", true));
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  const auto plain = launch(2, act_run(dir / "c", false));
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(contains(plain.output, "LeRobot image transforms on"));

  const auto a = losses(dir / "a"), b = losses(dir / "b"), c = losses(dir / "c");
  REQUIRE(a.size() == 8);
  REQUIRE(b.size() == 8);
  REQUIRE(c.size() == 8);
  bool any_differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(std::isfinite(a[i]));
    CHECK(a[i] == b[i]);  // the augmentations are a function of the seed: bit-identical runs
    any_differs = any_differs || a[i] != c[i];
  }
  // The policy saw other images than without augmentation.
  CHECK(any_differs);
}
