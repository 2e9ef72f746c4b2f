// The collective ledger names a stalled rank and ranks that issue different collectives, and
// every rank stops with a non-zero exit instead of hanging (2 processes through shardkit-run).
#include <filesystem>

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

TEST_CASE("the ledger's per-step comparison can be turned off, and training is unchanged by it") {
  TempDir dir("sk-ledger-off");
  const auto on = misbehaving_run(dir / "on", "fsdp", {});
  const auto off = misbehaving_run(dir / "off", "fsdp", {"--distributed.check_collectives=false"});
  INFO(on.output << off.output);
  REQUIRE(on.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  CHECK(losses(dir / "on") == losses(dir / "off"));
}
