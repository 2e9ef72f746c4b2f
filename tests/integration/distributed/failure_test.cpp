// A rank killed mid-run: every process stops with an error naming it; restarts resume from `last`.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {
/// The pid of the shardkit-train worker with RANK=`rank` among processes naming `marker`.
int worker_pid(const std::string& marker, int rank) {
  for (int pid : processes_with(marker)) {
    const auto cmd = slurp("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmd.find("shardkit-train") == 0 || cmd.find("/shardkit-train") != std::string::npos)
      if (cmd.find("shardkit-run") == std::string::npos && environment_of(pid, "RANK") == std::to_string(rank))
        return pid;
  }
  return -1;
}
}  // namespace

TEST_CASE("a SIGKILLed rank stops every process with an error naming it, leaving nothing behind") {
  TempDir dir("sk-kill");
  const auto out = dir / "run";
  // Long enough that it is still running when killed; the test's timeout is 20 s.
  BackgroundProcess run(launch_command(2, tiny_run(out, {"--steps=1000000", "--batch_size=4", "--log_freq=50",
                                                         "--save_checkpoint=false", "--distributed.timeout_s=20"})));
  const bool started = run.wait_for([&] { return fs::exists(out + "/metrics.jsonl"); }, 120);
  INFO(run.output());
  REQUIRE(started);
  const int victim = worker_pid(out, 1);
  REQUIRE(victim > 0);
  ::kill(victim, SIGKILL);
  // Bounded by the collective timeout (20 s) plus the launcher's grace period (5 s).
  const bool finished = run.wait(60);
  INFO(run.output());
  REQUIRE(finished);
  CHECK(run.exit_code() != 0);
  const auto text = run.output();
  CHECK(contains(text, "rank 1"));
  CHECK(contains(text, "signal 9"));
  // Rank 0's own error names the lost rank too (through the launcher's note in the store).
  CHECK(contains(text, "[rank0]"));
  CHECK(contains(text, "the launcher reports: rank 1"));
  CHECK(processes_with(out).empty());
}

TEST_CASE("with --max-restarts=1 a killed run completes from its last checkpoint and matches") {
  TempDir dir("sk-restart");
  // Both ranks are held at their 30th batch (after the step-20 checkpoint) until rank 1 is killed,
  // so the kill lands mid-run however fast the machine is.
  const auto gate = dir / "release";
  const std::vector<std::string> common = {"--steps=60", "--batch_size=4", "--save_freq=20", "--log_freq=20",
                                           "--policy.hidden_dim=256",
                                           "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets",
                                           "--dataset.type=hold_fixture", "--dataset.hold_file=" + gate};
  const auto reference = launch(2, tiny_run(dir / "ref", common));
  INFO(reference.output);
  REQUIRE(reference.exit_code == 0);

  const auto out = dir / "run";
  auto held = common;
  held.push_back("--dataset.hold_at=30");
  BackgroundProcess run(launch_command(2, tiny_run(out, held), {"--max-restarts=1"}));
  const bool holding = run.wait_for([&] {
    return fs::exists(gate + ".reached.rank0") && fs::exists(gate + ".reached.rank1") &&
           fs::exists(out + "/checkpoints/last");
  }, 300);
  INFO(run.output());
  REQUIRE(holding);
  const int victim = worker_pid(out, 1);
  REQUIRE(victim > 0);
  ::kill(victim, SIGKILL);
  std::ofstream(gate).close();  // the restarted ranks pass the gate
  const bool finished = run.wait(300);
  INFO(run.output());
  REQUIRE(finished);
  REQUIRE(run.exit_code() == 0);
  CHECK(contains(run.output(), "restart"));
  CHECK(contains(run.output(), "resuming from"));
  const auto a = read_metrics(dir / "ref");
  const auto b = read_metrics(out);
  REQUIRE(!a.empty());
  REQUIRE(!b.empty());
  CHECK(b.back().step == 60);
  CHECK(b.back().raw.at("loss") == a.back().raw.at("loss"));
}
