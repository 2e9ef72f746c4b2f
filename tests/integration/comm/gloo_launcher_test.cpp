// The gloo plugin under shardkit-run, the way users start it.
#include <catch2/catch.hpp>

#include <filesystem>

#include "comm_runs.hpp"
#include "test_support.hpp"

using namespace shardkit::test;

namespace {

std::string launcher() { return std::string(SHARDKIT_BIN_DIR) + "/shardkit-run"; }

ProcessResult launch(int nproc, const std::string& scenario, const std::string& args = "") {
  return run_command("env SHARDKIT_PLUGIN_PATH=" + shell_quote(SHARDKIT_PLUGIN_DIR) +
                     " timeout -k 5 180 " + shell_quote(launcher()) + " --nproc-per-node=" +
                     std::to_string(nproc) + " --master-port=0 " + shell_quote(comm_worker_path()) +
                     " " + scenario + " " + args);
}

}  // namespace

TEST_CASE("shardkit-run starts gloo workers that pass every collective", "[comm][gloo][launcher]") {
  REQUIRE(std::filesystem::exists(launcher()));
  const auto result = launch(2, "collectives");
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(contains(result.output, "comm_worker rank 0: OK collectives"));
  CHECK(contains(result.output, "comm_worker rank 1: OK collectives"));
}

TEST_CASE("under shardkit-run a peer that exits early fails the run with a gloo error",
          "[comm][gloo][launcher]") {
  REQUIRE(std::filesystem::exists(launcher()));
  const auto result = launch(2, "exit_early", "--timeout=60");
  INFO(result.output);
  CHECK(result.exit_code != 0);
  CHECK(contains(result.output, "gloo all_reduce on group 'world' (rank 0 of 2) failed: "));
}
