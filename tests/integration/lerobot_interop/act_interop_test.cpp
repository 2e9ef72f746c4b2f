// ACT checkpoints both ways with LeRobot 0.6.1 itself (its peer venv, SHARDKIT_LEROBOT_PYTHON):
// shardkit starts from a folder LeRobot saved (--policy.path reads LeRobot's config.json and
// weights), and LeRobot loads what shardkit saved (pretrained_model/ and --ema.enable's
// pretrained_model_ema/), strictly, with the same tensors and outputs.
#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("LeRobot's ACT checkpoint trains in shardkit, and shardkit's loads in LeRobot with the same weights") {
  TempDir dir("sk-act-interop");
  const std::string python = SHARDKIT_LEROBOT_PYTHON;
  const std::string script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/lerobot_interop/lerobot_act_interop.py";
  const auto made = run_command(shell_quote(python) + " " + shell_quote(script) + " make " + shell_quote(dir / "lerobot"));
  INFO(made.output);
  REQUIRE(made.exit_code == 0);

  // lr 0: the saved weights are exactly the ones loaded.
  const auto trained = run_program(
      "shardkit-train",
      {"--policy.path=" + (dir / "lerobot/checkpoints/000000/pretrained_model"), "--dataset.type=lerobot",
       "--dataset.repo_id=tiny/video", "--dataset.root=" + std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/lerobot-tiny-v3/video",
       "--steps=1", "--batch_size=2", "--optimizer.lr=0", "--num_threads=1", "--output_dir=" + (dir / "run"),
       "--ema.enable=true"});
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  CHECK(contains(trained.output, "loaded weights from"));
  CHECK(contains(trained.output, "policy act ("));

  const auto checked = run_command(shell_quote(python) + " " + shell_quote(script) + " check " +
                                   shell_quote(dir / "lerobot") + " " +
                                   shell_quote(dir / "run/checkpoints/last/pretrained_model"));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK(contains(checked.output, "ok: LeRobot loaded shardkit's checkpoint strictly"));

  // --ema.enable's pretrained_model_ema/ loads in LeRobot as any pretrained folder (at lr 0 the
  // average is the weights themselves).
  const auto ema = run_command(shell_quote(python) + " " + shell_quote(script) + " check " + shell_quote(dir / "lerobot") +
                               " " + shell_quote(dir / "run/checkpoints/last/pretrained_model_ema"));
  INFO(ema.output);
  CHECK(ema.exit_code == 0);
  CHECK(contains(ema.output, "ok: LeRobot loaded shardkit's checkpoint strictly"));
}
