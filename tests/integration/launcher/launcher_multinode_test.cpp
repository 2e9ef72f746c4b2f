// shardkit-run across "nodes" on loopback: node 0 hosts the store, node 1 joins it.
#include <catch2/catch.hpp>

#include "launcher_test_support.hpp"

using namespace shardkit::test;
using namespace shardkit::test::launcher;

namespace {

/// Starts node 1 in the background and node 0 in the foreground; prints each exit code.
ProcessResult run_two_nodes(const TempDir& dir, const std::string& flags,
                            const std::string& script) {
  const std::string common = shell_quote(launcher_path()) + " --nnodes=2 --rdzv-endpoint=127.0.0.1:" +
                             std::to_string(free_port()) + " " + flags + " ";
  const auto driver = write_script(
      dir, "two_nodes.sh",
      common + "--node-rank=1 " + shell_quote(script) + " > \"$(dirname \"$0\")/node1.out\" 2>&1 &\n"
      "node1=$!\n" +
      common + "--node-rank=0 " + shell_quote(script) + "\n"
      "echo \"node 0 exit code $?\"\n"
      "wait $node1\n"
      "echo \"node 1 exit code $?\"\n");
  return run_command(shell_quote(driver));
}

}  // namespace

TEST_CASE("two launchers form one world: ranks follow node rank, one store port",
          "[launcher][multinode]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-2nodes");
  const auto script = write_script(
      dir, "worker.sh",
      "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $GROUP_RANK $GROUP_WORLD_SIZE $MASTER_PORT\" > "
      "\"$(dirname \"$0\")/rank_$RANK\"\n");
  const auto r = run_two_nodes(dir, "--nproc-per-node=2 --timeout-s=60", script);
  const auto node1 = slurp(dir / "node1.out");
  INFO(r.output << "\nnode 1:\n" << node1);
  CHECK(contains(r.output, "node 0 exit code 0"));
  CHECK(contains(r.output, "node 1 exit code 0"));
  const std::string port = slurp(dir / "rank_0").substr(slurp(dir / "rank_0").rfind(' ') + 1);
  CHECK(slurp(dir / "rank_0") == "0 4 0 0 2 " + port);
  CHECK(slurp(dir / "rank_1") == "1 4 1 0 2 " + port);
  CHECK(slurp(dir / "rank_2") == "2 4 0 1 2 " + port);
  CHECK(slurp(dir / "rank_3") == "3 4 1 1 2 " + port);
}

TEST_CASE("a failure on one node stops the workers of the other", "[launcher][multinode]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-2nodes-fail");
  const auto script = write_script(dir, "worker.sh",
                                   "if [ \"$GROUP_RANK\" = 1 ]; then echo 'node 1 gives up'; exit 4; fi\n"
                                   "sleep 1000 &\n"
                                   "echo $! > \"$(dirname \"$0\")/child_$RANK\"\n"
                                   "wait\n");
  const auto r = run_two_nodes(dir, "--nproc-per-node=1 --timeout-s=60 --grace-period-s=2", script);
  const auto node1 = slurp(dir / "node1.out");
  INFO(r.output << "\nnode 1:\n" << node1);
  // node 0's worker would sleep 1000 s if the failure on node 1 did not stop it
  const pid_t sleeper = read_pid(dir / "child_0");
  REQUIRE(sleeper > 0);
  CHECK_FALSE(process_running(sleeper));
  CHECK(contains(r.output, "node 0 exit code 1"));  // another node's worker failed
  CHECK(contains(r.output, "node 1 exit code 4"));  // its own worker's code
  CHECK(contains(r.output, "a worker on another node failed: rank 1 (node 1, pid"));
  CHECK(contains(r.output, "exited with code 4"));
  CHECK(contains(node1, "rank 1 (local rank 0, pid"));
  CHECK(contains(node1, "failed: exited with code 4"));
}

TEST_CASE("after a failure on one node, every node restarts together", "[launcher][multinode]") {
  SHARDKIT_REQUIRE_GLOO();
  TempDir dir("shardkit-run-2nodes-restart");
  const auto script = write_script(
      dir, "worker.sh",
      "echo \"$RANK $TORCHELASTIC_RESTART_COUNT\" >> \"$(dirname \"$0\")/starts_$RANK\"\n"
      "if [ \"$TORCHELASTIC_RESTART_COUNT\" = 0 ]; then\n"
      "  if [ \"$GROUP_RANK\" = 1 ]; then exit 4; fi\n"
      "  sleep 1000 & wait\n"
      "fi\n"
      "echo \"rank $RANK done\"\n");
  const auto r = run_two_nodes(
      dir, "--nproc-per-node=1 --timeout-s=60 --grace-period-s=2 --max-restarts=1", script);
  const auto node1 = slurp(dir / "node1.out");
  INFO(r.output << "\nnode 1:\n" << node1);
  CHECK(contains(r.output, "node 0 exit code 0"));
  CHECK(contains(r.output, "node 1 exit code 0"));
  CHECK(contains(r.output, "restarting all workers (restart 1 of 1)"));
  CHECK(contains(node1, "restarting all workers (restart 1 of 1)"));
  CHECK(contains(r.output, "[rank0]: rank 0 done"));
  CHECK(contains(node1, "[rank1]: rank 1 done"));
  CHECK(slurp(dir / "starts_0") == "0 0\n0 1\n");
  CHECK(slurp(dir / "starts_1") == "1 0\n1 1\n");
}

TEST_CASE("a node started with other flags than node 0 is refused", "[launcher][multinode]") {
  SHARDKIT_REQUIRE_GLOO();
  const int port = free_port();
  TempDir dir("shardkit-run-2nodes-mismatch");
  const std::string endpoint = " --nnodes=2 --timeout-s=20 --rdzv-endpoint=127.0.0.1:" +
                               std::to_string(port);
  const auto driver = write_script(
      dir, "mismatch.sh",
      shell_quote(launcher_path()) + endpoint + " --node-rank=0 --nproc-per-node=2 true > /dev/null 2>&1 &\n"
      "node0=$!\n" +
      shell_quote(launcher_path()) + endpoint + " --node-rank=1 --nproc-per-node=3 true\n"
      "echo \"node 1 exit code $?\"\n"
      "kill $node0; wait $node0\n");
  const auto r = run_command(shell_quote(driver));
  INFO(r.output);
  CHECK(contains(r.output, "node 1 exit code 2"));
  CHECK(contains(r.output, "--nproc-per-node=3"));
  CHECK(contains(r.output, "--nproc-per-node=2"));
}

TEST_CASE("node 0 names the nodes that never joined", "[launcher][multinode]") {
  SHARDKIT_REQUIRE_GLOO();
  const auto r = run_launcher("--nnodes=3 --node-rank=0 --master-port=" +
                              std::to_string(free_port()) + " --timeout-s=2 true");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "node(s) 1, 2 never joined the rendezvous"));
}
