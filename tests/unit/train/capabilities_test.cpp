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

TEST_CASE("a sharded mesh picks fsdp (LeRobot's choice), whose shards need a sharded format", "[train][errors]") {
  TempDir tmp;
  const auto r = rank0_of_2(tmp / "run", "--parallelism.dp_shard=2");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--checkpoint_format=safetensors saves whole tensors only, but backend 'fsdp' shards "
                           "them; use --checkpoint_format=dcp"));
  CHECK_FALSE(fs::exists(tmp / "run"));
}

TEST_CASE("a plugin backend that declares it shards needs a format that holds shards", "[train][errors]") {
  TempDir tmp;
  const auto r = rank0_of_2(tmp / "run", "--parallelism.dp_shard=2 --distributed_backend=sharding_fixture --plugins=" +
                                             kShardingFixture);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--checkpoint_format=safetensors saves whole tensors only, but backend "
                           "'sharding_fixture' shards them; use --checkpoint_format=dcp"));
  // Without checkpoints the combination is allowed: the run gets as far as joining its peer.
  const auto nosave = rank0_of_2(tmp / "run2", "--parallelism.dp_shard=2 --distributed_backend=sharding_fixture "
                                                   "--save_checkpoint=false --plugins=" + kShardingFixture);
  INFO(nosave.output);
  CHECK_FALSE(contains(nosave.output, "saves whole tensors only"));
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
