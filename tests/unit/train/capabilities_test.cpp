// Start-up checks on what the selected plugins declare they can do (descriptor capabilities):
// each impossible combination is refused before any rank joins the run, naming the flags.
#include <catch2/catch.hpp>

#include <filesystem>

#include "train_fixture.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

const std::string kShardingFixture = std::string(SHARDKIT_FIXTURE_DIR) +
                                     "/backends/libshardkit-backend-sharding_fixture.so";

/// shardkit-train as rank 0 of 2: the checks run before the rank would wait for its peer.
ProcessResult rank0_of_2(const std::string& out, const std::string& flags) {
  return run_command("WORLD_SIZE=2 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) + " '" +
                     std::string(SHARDKIT_BIN_DIR) + "/shardkit-train' --output_dir=" + out +
                     " --distributed.timeout_s=2 " + flags);
}

}  // namespace

TEST_CASE("a sharded backend passes the start-up checks with every built-in format (they all hold shards)",
          "[train][errors]") {
  TempDir tmp;
  for (const std::string format : {"safetensors", "dcp", "safetensors_dcp"}) {
    INFO("format " << format);
    // The checks pass: the rank gets as far as waiting for its peer, which never comes.
    const auto r = rank0_of_2(tmp / ("run_" + format), "--parallelism.dp_shard=2 --distributed_backend=sharding_fixture "
                                                        "--checkpoint_format=" + format + " --plugins=" + kShardingFixture);
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK_FALSE(contains(r.output, "saves whole tensors only"));
    CHECK_FALSE(contains(r.output, "configuration error"));
  }
}

TEST_CASE("a replicating backend on a sharded mesh names the backends that shard", "[train][errors]") {
  TempDir tmp;
  const auto r = rank0_of_2(tmp / "run", "--parallelism.dp_shard=2 --distributed_backend=ddp --plugins=" +
                                             kShardingFixture);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--distributed_backend=ddp replicates the whole model, but the mesh asks for "
                           "--parallelism.dp_shard=2; use a backend that shards parameters (installed: "
                           "fsdp, sharding_fixture, zero)"));
}

TEST_CASE("a one-process backend under a launcher names the backends that run several", "[train][errors]") {
  TempDir tmp;
  const auto r = rank0_of_2(tmp / "run", "--distributed_backend=single");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--distributed_backend=single runs one process, but this run has WORLD_SIZE=2"));
  CHECK(contains(r.output, "(or one of: ddp, fsdp, zero)"));
}
