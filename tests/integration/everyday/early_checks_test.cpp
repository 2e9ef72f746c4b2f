// Checks that catch mistakes early: job names that are paths, inconsistent checkpoints, a diverging loss.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"
#include "program_environment.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("--job_name with / or .. is refused") {
  TempDir dir("sk-job-name");
  for (const auto* job : {"a/b", "..", "x..y"}) {
    const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=2", std::string("--job_name=") + job}));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, std::string("--job_name=") + job + " names a folder path"));
  }
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("a training_step.json whose step disagrees with its folder is an inconsistent checkpoint") {
  TempDir dir("sk-inconsistent");
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=10", "--save_freq=5"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // Checkpoint 000005 gets the record of checkpoint 000010 (a hand-made mix-up).
  fs::copy_file(dir / "run/checkpoints/000010/training_state/training_step.json",
                dir / "run/checkpoints/000005/training_state/training_step.json",
                fs::copy_options::overwrite_existing);
  const auto r = run_program("shardkit-train", {"--resume=true", "--steps=20",
      "--config_path=" + (dir / "run/checkpoints/000005/pretrained_model/train_config.json")});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "inconsistent checkpoint"));
  CHECK(contains(r.output, "its folder is step 000005 but training_state/training_step.json records step 10"));
}

TEST_CASE("a training_step.json whose step disagrees with the scheduler state saved with it is an inconsistent checkpoint") {
  TempDir dir("sk-inconsistent-scheduler");
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=10", "--save_freq=5"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // The scheduler state of checkpoint 000005 says 4 steps were taken (same size: the manifest's
  // size check passes, so this check is what refuses it).
  const auto path = dir / "run/checkpoints/000005/training_state/scheduler_state.json";
  auto text = slurp(path);
  const auto at = text.find("\"last_epoch\": 5");
  REQUIRE(at != std::string::npos);
  text.replace(at, 15, "\"last_epoch\": 4");
  std::ofstream(path) << text;
  const auto r = run_program("shardkit-train", {"--resume=true", "--steps=20",
      "--config_path=" + (dir / "run/checkpoints/000005/pretrained_model/train_config.json")});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "inconsistent checkpoint"));
  CHECK(contains(r.output, "training_step.json records step 5 but training_state/scheduler_state.json has taken 4 steps"));
  CHECK_FALSE(contains(r.output, "training from step"));
}

TEST_CASE("a loss that grows by orders of magnitude is warned about with the lr") {
  TempDir dir("sk-loss-growth");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=30", "--optimizer.lr=3",
                                                                       "--scheduler.type=constant"}));
  INFO(r.output);
  CHECK(contains(r.output, "training may be diverging"));
  CHECK(contains(r.output, "at lr 3.000e+00"));
  // An ordinary run is not warned about.
  const auto calm = run_program("shardkit-train", tiny_run(dir / "calm", {"--steps=30"}));
  INFO(calm.output);
  REQUIRE(calm.exit_code == 0);
  CHECK_FALSE(contains(calm.output, "diverging"));
}

TEST_CASE("--policy.path to a checkpoint of a policy whose plugin is not loaded names the plugin to load") {
  TempDir dir("sk-policy-type");
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=5", "--save_freq=5"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  fs::copy(dir / "run/checkpoints/000005/pretrained_model", dir / "model");
  auto config = slurp(dir / "model/config.json");
  const auto at = config.find("\"mlp\"");
  REQUIRE(at != std::string::npos);  // config.json records the policy type
  config.replace(at, 5, "\"gripper_net\"");
  std::ofstream(dir / "model/config.json") << config;
  const auto r = run_program("shardkit-train", tiny_run(dir / "tuned", {"--steps=5", "--policy.path=" + (dir / "model")}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "this checkpoint is a 'gripper_net' policy"));
  CHECK(contains(r.output, "load its plugin with --plugins="));
}

TEST_CASE("accelerate's configuring variables stop a run, as in lerobot-train, unless allowed") {
  TempDir dir("sk-accelerate-env");
  const auto refused =
      run_program_with_environment("shardkit-train", tiny_run(dir / "refused", {"--steps=2"}), {"ACCELERATE_USE_FSDP=true"});
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.output, "ACCELERATE_USE_FSDP=true"));
  CHECK(contains(refused.output, "--parallelism.dp_shard"));
  CHECK_FALSE(fs::exists(dir / "refused/checkpoints"));

  const auto allowed = run_program_with_environment("shardkit-train", tiny_run(dir / "allowed", {"--steps=2"}),
                                                    {"ACCELERATE_USE_FSDP=true", "LEROBOT_ALLOW_ACCELERATE_ENV=1"});
  INFO(allowed.output);
  CHECK(allowed.exit_code == 0);
  CHECK(contains(allowed.output, "LEROBOT_ALLOW_ACCELERATE_ENV=1: going on"));
  CHECK(fs::exists(dir / "allowed/checkpoints/000002"));
}
