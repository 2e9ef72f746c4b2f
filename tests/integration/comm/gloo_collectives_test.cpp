// The gloo plugin across real processes: every collective and dtype, and peers that fail.
#include <catch2/catch.hpp>

#include "comm_runs.hpp"
#include "test_support.hpp"

using namespace shardkit::test;

namespace {

void require_all_ok(const RunOutcome& outcome, const std::string& scenario) {
  INFO(outcome.all_output());
  for (const auto& [rank, code] : outcome.exit_code) {
    CHECK(code == 0);
    CHECK(contains(outcome.output.at(rank), "comm_worker rank " + std::to_string(rank) + ": OK " + scenario));
  }
}

}  // namespace

TEST_CASE("gloo collectives on 2 ranks", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 2;
  require_all_ok(run_workers(run), "collectives");
}

TEST_CASE("gloo collectives on 3 ranks", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 3;
  require_all_ok(run_workers(run), "collectives");
}

TEST_CASE("a peer that exits mid-collective fails the others quickly", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 2;
  run.scenario = "exit_early";
  run.args = {"--timeout=60"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(1) == 0);
  CHECK(contains(outcome.output.at(1), "exiting in the middle"));
  CHECK(outcome.exit_code.at(0) == 1);
  const auto& out = outcome.output.at(0);
  CHECK(contains(out, "gloo all_reduce on group 'world' (rank 0 of 2) failed: "));
  CHECK(contains(out, "; a peer rank probably exited or timed out"));
  // A closed connection is noticed at once, long before the 60 s timeout.
  CHECK(outcome.seconds < 30);
}

TEST_CASE("a peer that stops answering fails the others after the timeout", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 2;
  run.scenario = "hang";
  run.args = {"--timeout=4"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 1);
  CHECK(contains(outcome.output.at(0), "gloo all_reduce on group 'world' (rank 0 of 2) failed: "));
  CHECK(outcome.exit_code.at(1) == 0);
  CHECK(outcome.seconds >= 4);
  CHECK(outcome.seconds < 25);
}
