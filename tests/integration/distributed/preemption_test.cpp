// SIGTERM to the launcher: every rank checkpoints the same step and exits 0; --resume continues.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("SIGTERM to the launcher produces a complete checkpoint and a clean exit") {
  TempDir dir("sk-sigterm");
  const auto out = dir / "run";
  BackgroundProcess run(launch_command(2, tiny_run(out, {"--steps=1000000", "--batch_size=4", "--log_freq=100",
                                                         "--save_freq=1000000"})));
  const bool started = run.wait_for([&] { return fs::exists(out + "/metrics.jsonl"); }, 120);
  INFO(run.output());
  REQUIRE(started);
  run.signal(SIGTERM);
  const bool finished = run.wait(120);
  INFO(run.output());
  REQUIRE(finished);
  CHECK(run.exit_code() == 0);
  CHECK(contains(run.output(), "stopped by SIGTERM after step"));
  REQUIRE(fs::is_symlink(out + "/checkpoints/last"));
  const auto step_json = slurp(out + "/checkpoints/last/training_state/training_step.json");
  REQUIRE(contains(step_json, "\"step\": "));
  const auto step = std::stoll(step_json.substr(step_json.find("\"step\": ") + 8));
  CHECK(step > 0);
  CHECK(processes_with(out).empty());
  // The run continues from there.
  const auto resumed = launch(2, {"--resume=true", "--output_dir=" + out, "--steps=" + std::to_string(step + 10)});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "at step " + std::to_string(step)));
  CHECK(read_metrics(out).back().step == step + 10);
}
