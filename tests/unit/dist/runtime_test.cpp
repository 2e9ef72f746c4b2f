// Rank detection from torchrun, Slurm and Open MPI variables.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "shardkit/error.hpp"
#include "shardkit/runtime.hpp"
#include "test_support.hpp"

using shardkit::Runtime;
using Vars = std::map<std::string, std::string>;

namespace {
Runtime detect(const Vars& vars) {
  return Runtime::from_variables(
      [](const char* name, void* user) -> const char* {
        const auto& v = *static_cast<const Vars*>(user);
        auto it = v.find(name);
        return it == v.end() ? nullptr : it->second.c_str();
      },
      const_cast<Vars*>(&vars));
}
std::string error_of(const Vars& vars) {
  try {
    detect(vars);
  } catch (const shardkit::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("no launcher variables means one process") {
  const auto rt = detect({});
  CHECK(rt.world_size == 1);
  CHECK(rt.rank == 0);
  CHECK(rt.launcher == "none");
  CHECK_FALSE(rt.multi_process());
}

TEST_CASE("torchrun variables") {
  const auto rt = detect({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                          {"LOCAL_WORLD_SIZE", "2"}, {"GROUP_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"},
                          {"MASTER_PORT", "1234"}, {"TORCHELASTIC_RESTART_COUNT", "2"},
                          {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  CHECK(rt.launcher == "torchrun");
  CHECK(rt.rank == 3);
  CHECK(rt.world_size == 4);
  CHECK(rt.local_rank == 1);
  CHECK(rt.local_world_size == 2);
  CHECK(rt.node_rank == 1);
  CHECK(rt.master_addr == "10.0.0.1");
  CHECK(rt.master_port == 1234);
  CHECK(rt.restart_count == 2);
  CHECK(rt.use_agent_store);
  CHECK_FALSE(detect({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "False"}})
                  .use_agent_store);
}

TEST_CASE("Slurm variables, master from the first host of the node list") {
  const auto rt = detect({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                          {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"SLURM_NODEID", "1"},
                          {"SLURM_JOB_NODELIST", "gpu[07-08],cpu1"}});
  CHECK(rt.launcher == "slurm");
  CHECK(rt.rank == 5);
  CHECK(rt.world_size == 8);
  CHECK(rt.local_rank == 1);
  CHECK(rt.local_world_size == 4);
  CHECK(rt.node_rank == 1);
  CHECK(rt.master_addr == "gpu07");
  CHECK(shardkit::first_slurm_host("node1,node2") == "node1");
  CHECK(shardkit::first_slurm_host("n[9,3-4]x") == "n9x");
  CHECK(shardkit::first_slurm_host("single") == "single");
  // MASTER_ADDR wins over the node list.
  CHECK(detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a[1-2]"},
                {"MASTER_ADDR", "b"}}).master_addr == "b");
}

TEST_CASE("Open MPI variables") {
  const auto rt = detect({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
                          {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"},
                          {"MASTER_ADDR", "h0"}});
  CHECK(rt.launcher == "openmpi");
  CHECK(rt.rank == 2);
  CHECK(rt.world_size == 3);
  CHECK(rt.local_rank == 0);
  CHECK(rt.master_addr == "h0");
}

TEST_CASE("torchrun variables take precedence over Slurm's") {
  const auto rt = detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  CHECK(rt.launcher == "torchrun");
  CHECK(rt.rank == 1);
}

TEST_CASE("inconsistent variables are named") {
  using shardkit::test::contains;
  CHECK(contains(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), "rank 2 is not below the world size 2"));
  CHECK(contains(error_of({{"RANK", "0"}}), "sets RANK but not WORLD_SIZE"));
  CHECK(contains(error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}}), "RANK=x"));
  CHECK(contains(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}), "MASTER_PORT=70000"));
}
