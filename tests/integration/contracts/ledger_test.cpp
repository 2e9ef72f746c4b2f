// The collective ledger names a stalled rank and ranks that issue different collectives, and
// every rank stops with a non-zero exit instead of hanging (2 processes through shardkit-run).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

namespace {

ProcessResult misbehaving_run(const std::string& out, const std::string& backend, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--output_dir=" + out, "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/policies",
                                   "--policy.type=wrap_fixture", "--steps=6", "--batch_size=2",
                                   "--distributed_backend=" + backend, "--num_threads=1", "--save_checkpoint=false"};
  args.insert(args.end(), extra.begin(), extra.end());
  return launch(2, args);
}

/// Processes whose command line mentions `marker` (a test's own temporary folder).
std::vector<std::string> processes_mentioning(const std::string& marker) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) found.push_back(name);
  }
  return found;
}

}  // namespace

TEST_CASE("a rank stalled in computation is named by the ledger, and every rank stops") {
  TempDir dir("sk-ledger-stall");
  const auto r = misbehaving_run(dir / "run", "ddp",
                                 {"--policy.misbehave=stall", "--policy.misbehave_at=3", "--distributed.timeout_s=4"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "collective ledger of rank 0: all_reduce #"));
  CHECK(contains(r.output, "(ddp, bucket 0, step 3) did not complete."));
  CHECK(contains(r.output, "ranks that have not reached #"));
  CHECK(contains(r.output, "rank 1: last issued "));
  CHECK(contains(r.output, "busy in computation or I/O"));
  CHECK(contains(r.output, "this rank's last collectives:"));
  // The stalled rank hears of it through the store and prints its own record before it ends.
  CHECK(contains(r.output, "stopping because rank 0: all_reduce #"));
  CHECK(processes_mentioning(dir.path()).empty());  // no orphan processes
}

TEST_CASE("a rank sleeping inside a wrap unit is named, with the collective the others wait in") {
  TempDir dir("sk-ledger-unit-stall");
  const auto r = misbehaving_run(dir / "run", "fsdp",
                                 {"--policy.misbehave=stall", "--policy.misbehave_at=3", "--distributed.timeout_s=4"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "collective ledger of rank 0: "));
  CHECK(contains(r.output, "(fsdp, unit blocks."));
  CHECK(contains(r.output, "ranks that have not reached #"));
  CHECK(contains(r.output, "rank 1: last issued "));
  CHECK(contains(r.output, "stopping because rank 0: "));
  CHECK(processes_mentioning(dir.path()).empty());
}

TEST_CASE("a rank that skips one all-reduce: every rank stops, the others naming the pending call (test-only fault switch)") {
  TempDir dir("sk-ledger-skip");
  // Rank 1 never issues the world group's 8th collective, ddp's gradient all-reduce of step 2:
  // its next call, the ledger's 6-value step check, meets rank 0's gradient all-reduce. Gloo
  // itself ends rank 1 on the size mismatch (its own "collective mismatch" message); rank 0's
  // ledger names the call it was left waiting in. (Calls of the same size that meet are found by
  // the ledger alone: the wrap-unit test above.)
  const auto command = "SHARDKIT_TEST_SKIP_COLLECTIVE=1:8 " +
                       launch_command(2, {"--output_dir=" + (dir / "run"),
                                          "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/policies",
                                          "--policy.type=wrap_fixture", "--steps=6", "--batch_size=2",
                                          "--distributed_backend=ddp", "--num_threads=1", "--save_checkpoint=false",
                                          "--distributed.timeout_s=60"});
  const auto r = run_command(command);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "collective ledger of rank 0: all_reduce #8 on 'world' [852] float32 (ddp, bucket 0, step 2) "
                           "did not complete."));
  CHECK(contains(r.output, "collective mismatch"));
  CHECK(processes_mentioning(dir.path()).empty());
}

TEST_CASE("ranks that call a wrap unit a different number of times are named with the step, unit and calls") {
  TempDir dir("sk-ledger-diverge");
  // Rank 1 calls blocks.0 twice in its second forward: under fsdp one more all-gather, of the
  // same size as blocks.1's, which pairs with rank 0's without any transport error.
  const auto r = misbehaving_run(dir / "run", "fsdp",
                                 {"--policy.misbehave=repeat_block", "--policy.misbehave_at=2",
                                  "--distributed.timeout_s=60"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  // Whichever rank finds it first names both calls: rank 1's extra gather of blocks.0 against
  // rank 0's gather of blocks.1 at the same position of their sequences.
  CHECK(contains(r.output, "ranks diverged at step 2: rank "));
  CHECK(contains(r.output, "float32 (fsdp, unit blocks.0, step 2)"));
  CHECK(contains(r.output, "float32 (fsdp, unit blocks.1, step 2)"));
  CHECK(contains(r.output, "look for a module called a different number of times"));
}

TEST_CASE("a rank that skips a wrap unit, so that collectives of other sizes meet, is named without a crash") {
  TempDir dir("sk-ledger-skip");
  // Rank 1 leaves blocks.1 out of its second forward: under fsdp its backward reduce-scatters
  // (256 elements) meet rank 0's all-gathers (128) - Gloo would abort a process on the sizes.
  const auto r = misbehaving_run(dir / "run", "fsdp",
                                 {"--policy.misbehave=skip_block", "--policy.misbehave_at=2",
                                  "--distributed.timeout_s=60"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "ranks diverged at step 2: rank "));
  CHECK(contains(r.output, "(fsdp, unit blocks.0, step 2) where rank "));
  CHECK_FALSE(contains(r.output, "signal"));
  CHECK_FALSE(contains(r.output, "terminate called"));
  CHECK(processes_mentioning(dir.path()).empty());
}

TEST_CASE("the ledger's per-step comparison can be turned off, and training is unchanged by it") {
  TempDir dir("sk-ledger-off");
  const auto on = misbehaving_run(dir / "on", "fsdp", {});
  const auto off = misbehaving_run(dir / "off", "fsdp", {"--distributed.check_collectives=false"});
  INFO(on.output << off.output);
  REQUIRE(on.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  CHECK(losses(dir / "on") == losses(dir / "off"));
}
