// The gloo plugin's rendezvous: missing ranks named, busy ports explained, the agent store, addresses.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <shardkit/comm.hpp>
#include <shardkit/error.hpp>
#include <shardkit/loader.hpp>

#include "comm_runs.hpp"
#include "test_support.hpp"

using namespace shardkit::test;

namespace {

/// The gloo plugin loaded into the test process, to host a store as a launcher does.
struct HostedStore {
  shardkit::Registry registry;
  std::shared_ptr<shardkit::Comm> comm;
  std::shared_ptr<shardkit::Store> store;
  HostedStore() {
    shardkit::PluginSearch search;
    search.dirs = {SHARDKIT_PLUGIN_DIR};
    search.use_env = false;
    search.use_exe_dir = false;
    registry.discover(search);
    comm = registry.create_as<shardkit::Comm>("comm", "gloo", shardkit::PluginContext{});
    store = comm->host_store(0, std::chrono::seconds(30));
  }
};

}  // namespace

TEST_CASE("a rendezvous timeout names the rank that never arrived", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 2;
  run.ranks = {0};
  run.scenario = "init";
  run.args = {"--timeout=3"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 1);
  const auto where = "127.0.0.1:" + std::to_string(outcome.master_port);
  CHECK(contains(outcome.output.at(0), "rendezvous at " + where +
                                           " timed out after 3 s: rank 1 never arrived (1 of 2 "
                                           "joined); check that every node was started and can "
                                           "reach " + where));
  CHECK(outcome.seconds < 25);
}

TEST_CASE("a busy MASTER_PORT is explained", "[comm][gloo]") {
  BusyPort busy;
  WorkerRun run;
  run.world_size = 2;
  run.ranks = {0};
  run.scenario = "init";
  run.master_port = busy.port();
  run.args = {"--timeout=5"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 1);
  CHECK(contains(outcome.output.at(0), "MASTER_PORT=" + std::to_string(busy.port()) +
                                           " is already in use on 127.0.0.1: another run is using "
                                           "it; choose another port (shardkit-run --master-port=0 "
                                           "picks a free one)"));
}

TEST_CASE("ranks started before rank 0 wait for its store", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 3;
  run.scenario = "init";
  run.rank0_delay_s = 2;
  run.args = {"--timeout=30", "--debug"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  for (int rank = 0; rank < 3; ++rank) {
    CHECK(outcome.exit_code.at(rank) == 0);
    // Loopback master: Gloo binds to 127.0.0.1, not the host name's address.
    CHECK(contains(outcome.output.at(rank), "gloo: binding to 127.0.0.1"));
  }
}

TEST_CASE("host_store binds a free port and speaks torchrun's key layout", "[comm][gloo]") {
  WorkerRun run;
  run.world_size = 1;
  run.scenario = "host_store";
  run.args = {"--port=0", "--timeout=10"};
  auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 0);
  CHECK(contains(outcome.output.at(0), "OK host_store"));

  BusyPort busy;
  run.args = {"--port=" + std::to_string(busy.port()), "--timeout=10"};
  outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 1);
  CHECK(contains(outcome.output.at(0), "port " + std::to_string(busy.port()) +
                                           " is already in use on this machine"));
  CHECK(contains(outcome.output.at(0), "--master-port=0 picks a free one"));
}

TEST_CASE("workers join a launcher's store under the attempt prefix", "[comm][gloo]") {
  HostedStore host;
  const int port = host.comm->bound_port();
  REQUIRE(port > 0);
  WorkerRun run;
  run.world_size = 2;
  run.master_port = port;
  run.env = {{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "3"}};
  const auto outcome = run_workers(run);
  {
    INFO(outcome.all_output());
    CHECK(outcome.exit_code.at(0) == 0);
    CHECK(outcome.exit_code.at(1) == 0);
  }
  auto attempt = host.store->with_prefix("/worker/attempt_3");
  CHECK(attempt->check({shardkit::store_keys::arrived(0), shardkit::store_keys::arrived(1),
                        "worker/0", "worker/1"}));
  CHECK_FALSE(host.store->check({shardkit::store_keys::arrived(0)}));
}

TEST_CASE("a failing peer's error carries the launcher's report", "[comm][gloo]") {
  HostedStore host;
  const std::string report = "worker rank 1 (pid 4242) exited with code 0 before the others";
  host.store->with_prefix("/worker/attempt_0")->set(shardkit::store_keys::kFailure, report);
  WorkerRun run;
  run.world_size = 2;
  run.scenario = "exit_early";
  run.master_port = host.comm->bound_port();
  run.env = {{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "0"}};
  run.args = {"--timeout=60"};
  const auto outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 1);
  CHECK(contains(outcome.output.at(0), "gloo all_reduce on group 'world' (rank 0 of 2) failed: "));
  CHECK(contains(outcome.output.at(0), "; the launcher reports: " + report));
}

TEST_CASE("gloo binds to the interface GLOO_SOCKET_IFNAME names", "[comm][gloo]") {
  // Each rank creates gloo's device when it makes the world group: an interface that does not
  // exist fails there, named; the loopback interface works.
  WorkerRun run;
  run.world_size = 2;
  run.scenario = "init";
  run.args = {"--timeout=10"};
  run.env = {{"GLOO_SOCKET_IFNAME", "nosuchif0"}};
  auto outcome = run_workers(run);
  INFO(outcome.all_output());
  for (const int rank : {0, 1}) {
    CHECK(outcome.exit_code.at(rank) == 1);
    CHECK(contains(outcome.output.at(rank), "on GLOO_SOCKET_IFNAME=nosuchif0"));
  }
  run.env = {{"GLOO_SOCKET_IFNAME", "lo"}};
  outcome = run_workers(run);
  INFO(outcome.all_output());
  CHECK(outcome.exit_code.at(0) == 0);
  CHECK(outcome.exit_code.at(1) == 0);
}
