// Stop signals: SIGTERM (exit 0) and SIGINT (exit 130) checkpoint every rank at the same step; --resume continues.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// The step of `run`'s checkpoints/last (0 when unreadable).
long long last_checkpoint_step(const std::string& run) {
  const auto step_json = slurp(run + "/checkpoints/last/training_state/training_step.json");
  const auto at = step_json.find("\"step\": ");
  return at == std::string::npos ? 0 : std::stoll(step_json.substr(at + 8));
}

/// Flags of a run into `out` that only a signal ends (it would take hours).
std::vector<std::string> endless_run(const std::string& out) {
  return tiny_run(out, {"--steps=1000000", "--batch_size=4", "--log_freq=100", "--save_freq=1000000"});
}

/// Starts `command` (a run into `out`), sends `sig` once training has logged, and waits
/// for the end.
ProcessResult stopped_by(int sig, const std::string& command, const std::string& out) {
  BackgroundProcess run(command);
  const bool started = run.wait_for([&] { return fs::exists(out + "/metrics.jsonl"); }, 120);
  INFO(run.output());
  REQUIRE(started);
  run.signal(sig);
  const bool finished = run.wait(120);
  INFO(run.output());
  REQUIRE(finished);
  return {run.exit_code(), run.output()};
}

/// `resumed` continued run `out` from checkpoint `step` and ran 10 more steps.
void check_resumed(const ProcessResult& resumed, const std::string& out, long long step) {
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "at step " + std::to_string(step)));
  CHECK(read_metrics(out).back().step == step + 10);
}

}  // namespace

TEST_CASE("SIGTERM to the launcher produces a complete checkpoint and a clean exit") {
  TempDir dir("sk-sigterm");
  const auto out = dir / "run";
  const auto run = stopped_by(SIGTERM, launch_command(2, endless_run(out)), out);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(contains(run.output, "stopped by SIGTERM after step"));
  REQUIRE(fs::is_symlink(out + "/checkpoints/last"));
  const auto step = last_checkpoint_step(out);
  REQUIRE(step > 0);
  CHECK(processes_with(out).empty());
  check_resumed(launch(2, {"--resume=true", "--output_dir=" + out, "--steps=" + std::to_string(step + 10)}), out,
                step);
}

TEST_CASE("SIGINT to a single shardkit-train checkpoints, exits 130, and the run resumes") {
  TempDir dir("sk-sigint");
  const auto out = dir / "run";
  std::string command = shell_quote(bin("shardkit-train"));
  for (const auto& a : endless_run(out)) command += " " + shell_quote(a);
  const auto run = stopped_by(SIGINT, command, out);
  INFO(run.output);
  CHECK(run.exit_code == 130);
  CHECK(contains(run.output, "interrupted by SIGINT after step"));
  CHECK_FALSE(contains(run.output, "SIGTERM"));
  const auto step = last_checkpoint_step(out);
  REQUIRE(step > 0);
  check_resumed(run_program("shardkit-train", {"--resume=true", "--output_dir=" + out,
                                               "--steps=" + std::to_string(step + 10)}),
                out, step);
}

TEST_CASE("SIGINT to the launcher reaches every rank as SIGINT: one checkpoint, exit 130") {
  TempDir dir("sk-sigint-launch");
  const auto out = dir / "run";
  auto flags = endless_run(out);
  flags.push_back("--log_all_ranks=true");  // both ranks' stop lines, to compare them
  const auto run = stopped_by(SIGINT, launch_command(2, flags), out);
  INFO(run.output);
  CHECK(run.exit_code == 130);
  CHECK(contains(run.output, "got SIGINT; sending SIGINT to every worker"));
  CHECK(contains(run.output, "[rank0]: "));
  // Both ranks stop after the same step and say why.
  const auto first = run.output.find("interrupted by SIGINT after step");
  REQUIRE(first != std::string::npos);
  const auto line_end = run.output.find('\n', first);
  const auto second = run.output.find("interrupted by SIGINT after step", first + 1);
  REQUIRE(second != std::string::npos);
  CHECK(run.output.substr(first, line_end - first) ==
        run.output.substr(second, run.output.find('\n', second) - second));
  CHECK_FALSE(contains(run.output, "by SIGTERM"));
  CHECK_FALSE(contains(run.output, "last lines of rank"));  // an interrupt is not a failure report
  // No glog preamble ("WARNING: Logging before InitGoogleLogging()") from any library.
  CHECK_FALSE(contains(run.output, "InitGoogleLogging"));
  CHECK(last_checkpoint_step(out) > 0);
  CHECK(processes_with(out).empty());
}

TEST_CASE("SIGTERM with asynchronous saves waits for the background writer: last is the step it stopped after") {
  TempDir dir("sk-sigterm-async");
  const auto out = dir / "run";
  // A save every 20 steps: a background write is often in flight when the signal comes.
  const auto run = stopped_by(
      SIGTERM, launch_command(2, with(endless_run(out), {"--save_freq=20", "--checkpoint.async_mode=async"})), out);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  const auto at = run.output.find("stopped by SIGTERM after step ");
  REQUIRE(at != std::string::npos);
  const auto stopped = std::stoll(run.output.substr(at + std::string("stopped by SIGTERM after step ").size()));
  CHECK(last_checkpoint_step(out) == stopped);  // the save at the stop was written before the exit
  CHECK(contains(run.output, "written in the background"));
  CHECK(processes_with(out).empty());
  check_resumed(launch(2, {"--resume=true", "--output_dir=" + out, "--steps=" + std::to_string(stopped + 10)}), out,
                stopped);
}
