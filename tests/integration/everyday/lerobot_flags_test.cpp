// LeRobot command lines copy over: habit flags that turn things off are no-ops with a notice, the rest errors.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

bool lerobot_plugin_built() {
  return fs::exists(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-dataset-lerobot.so");
}

}  // namespace

TEST_CASE("LeRobot's off switches are accepted with a notice saying why they change nothing") {
  TempDir dir("sk-lerobot-flags");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=2", "--wandb.enable=false",
                                                                       "--policy.push_to_hub=false", "--eval_freq=0",
                                                                       "--num_workers=4", "--wandb.project=lerobot",
                                                                       "--wandb.entity=me", "--wandb.notes=first try",
                                                                       "--wandb.mode=offline",
                                                                       "--policy.repo_id=me/my_policy"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "--wandb.enable=false is ignored: shardkit has no Weights & Biases logger"));
  CHECK(contains(r.output, "--policy.push_to_hub=false is ignored: shardkit never uploads"));
  CHECK(contains(r.output, "--eval_freq=0: no evaluation while training, which is the default"));
  CHECK(contains(r.output, "--num_workers=4 is ignored: --dataset.type=synthetic has no workers option"));
  for (const auto* flag : {"--wandb.project=lerobot", "--wandb.entity=me", "--wandb.notes=first try", "--wandb.mode=offline"})
    CHECK(contains(r.output, std::string(flag) + " is ignored: shardkit sends nothing to Weights & Biases"));
  CHECK(contains(r.output, "--policy.repo_id=me/my_policy is ignored: shardkit pushes nothing to the Hugging Face Hub"));
  CHECK(read_metrics(dir / "run").size() == 2);
  // Not given, not mentioned.
  const auto plain = run_program("shardkit-train", tiny_run(dir / "plain", {"--steps=2"}));
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(contains(plain.output, "is ignored"));
}

TEST_CASE("asking for what shardkit lacks (wandb, hub upload, evaluation) is one configuration error") {
  TempDir dir("sk-lerobot-asks");
  // Evaluating a lerobot dataset needs held-out episodes (--dataset.eval_split), as in LeRobot main.
  const auto r = run_program("shardkit-train", {"--output_dir=" + dir / "run", "--steps=2", "--wandb.enable=true",
                                                "--policy.push_to_hub=true", "--eval_freq=500",
                                                "--dataset.type=lerobot", "--dataset.repo_id=a/b"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "3 configuration errors"));
  CHECK(contains(r.output, "--wandb.enable=true: shardkit has no Weights & Biases logger; track the run with trackio "
                           "(--trackio.enable=true, LeRobot's other tracker) or TensorBoard with --logger.type=tensorboard"));
  CHECK(contains(r.output, "--policy.push_to_hub=true: shardkit does not upload to the Hugging Face Hub"));
  CHECK(contains(r.output, "--eval_freq=500 needs held-out episodes: add --dataset.eval_split=0.1"));
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("--dataset.repo_id alone selects the lerobot dataset, as LeRobot has only that kind") {
  if (!lerobot_plugin_built()) FAIL("the lerobot dataset plugin was not built (needs Arrow and FFmpeg)");
  TempDir dir("sk-repo-id-alone");
  const auto r = run_program("shardkit-train", {"--print_config=true", "--dataset.repo_id=tiny/video",
                                                "--dataset.root=" + std::string(SHARDKIT_SOURCE_DIR) +
                                                    "/tests/data/lerobot-tiny-v3/video",
                                                "--policy.type=act", "--output_dir=" + (dir / "run")});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "= \"lerobot\""));
  CHECK(contains(r.output, "--dataset.repo_id (LeRobot's only kind of dataset)"));
}

TEST_CASE("--dataset.repo_id with a dataset that cannot read it names the dataset plugins there are") {
  TempDir dir("sk-repo-id");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=2", "--dataset.type=synthetic",
                                                                      "--dataset.repo_id=lerobot/pusht"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--dataset.repo_id=lerobot/pusht names a LeRobot dataset, but --dataset.type=synthetic is selected"));
  CHECK(contains(r.output, "Dataset plugins installed: "));
  CHECK(contains(r.output, "synthetic"));
  CHECK(contains(r.output, "--plugins=libshardkit-dataset-<name>.so"));
  CHECK(contains(r.output, lerobot_plugin_built() ? "add --dataset.type=lerobot" : "is not installed"));
  CHECK_FALSE(contains(r.output, "is an option of"));  // one message, not the generic one too
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("--num_workers=N sets the lerobot dataset's workers unless --dataset.num_workers is given") {
  if (!lerobot_plugin_built()) {
    // Without the plugin there is no dataset with workers: the notice path is the case above.
    FAIL("the lerobot dataset plugin was not built (needs Arrow and FFmpeg): cannot check the mapping");
  }
  TempDir dir("sk-num-workers");
  const auto mapped = run_program("shardkit-train", {"--print_config=true", "--dataset.type=lerobot", "--num_workers=3",
                                                     "--output_dir=" + (dir / "run")});
  INFO(mapped.output);
  REQUIRE(mapped.exit_code == 0);
  CHECK(contains(mapped.output, "dataset.num_workers"));
  CHECK(contains(mapped.output, "= 3"));
  CHECK(contains(mapped.output, "from --num_workers=3 (LeRobot's name)"));
  const auto both = run_program("shardkit-train", {"--print_config=true", "--dataset.type=lerobot", "--num_workers=3",
                                                   "--dataset.num_workers=1", "--output_dir=" + (dir / "run")});
  INFO(both.output);
  REQUIRE(both.exit_code == 0);
  CHECK_FALSE(contains(both.output, "from --num_workers=3"));
  CHECK_FALSE(fs::exists(dir / "run"));
}
