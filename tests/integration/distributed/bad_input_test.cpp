// Multi-process bad input: each gives a clear error on every rank and loses nothing.
#include <catch2/catch.hpp>

#include <filesystem>

#include "launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("a mesh that does not match the world size is refused before any training") {
  TempDir dir("sk-bad-mesh");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=5", "--parallelism.dp_replicate=3"}));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "--parallelism.dp_replicate=3 x --parallelism.dp_shard=1 with 2 processes"));
  CHECK_FALSE(fs::exists(dir / "run/metrics.jsonl"));
}

TEST_CASE("--distributed.comm=nccl on CPU tensors is refused at start, before joining") {
  TempDir dir("sk-bad-nccl");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=5", "--distributed.comm=nccl"}));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "--distributed.comm=nccl moves CUDA tensors only, but this run computes on cpu"));
  CHECK_FALSE(fs::exists(dir / "run/metrics.jsonl"));
}

TEST_CASE("options of another backend are refused naming the selected one") {
  TempDir dir("sk-bad-ns");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=5", "--accelerator.fsdp.reshard_after_forward=true"}));
  CHECK(r.exit_code == 2);  // the workers' configuration-error code, passed on by the launcher
  CHECK(contains(r.output, "--accelerator.fsdp.reshard_after_forward configures backend 'fsdp', but the "
                           "selected backend is 'ddp'"));
}

TEST_CASE("ranks started with different configurations are refused, naming the difference") {
  TempDir dir("sk-bad-config");
  std::string cmd = shell_quote(bin("shardkit-run")) + " --nproc-per-node=2 --master-port=0 --grace-period-s=5 sh -c " +
                    shell_quote("exec " + shell_quote(bin("shardkit-train")) + " --output_dir=" + shell_quote(dir / "run") +
                                " --policy.hidden_dim=32 --steps=5 --num_threads=1 --batch_size=$((4 + RANK))");
  const auto r = run_command(cmd);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "different configurations"));
  CHECK(contains(r.output, "rank 1: --batch_size=5 (rank 0: 4)"));
  CHECK_FALSE(fs::exists(dir / "run/metrics.jsonl"));
}

TEST_CASE("a rendezvous that times out names the ranks that never arrived") {
  TempDir dir("sk-bad-rdzv");
  // Rank 0 of 2 started by hand, without its peer: it hosts the store and waits 3 s.
  const auto port = std::to_string(free_port());
  const auto r = run_command("RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                             port + " " + shell_quote(bin("shardkit-train")) + " --output_dir=" +
                             shell_quote(dir / "run") + " --steps=5 --distributed.timeout_s=3");
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "timed out"));
  CHECK(contains(r.output, "rank 1"));
  CHECK(contains(r.output, "never arrived"));
}

TEST_CASE("a second run into the same folder is refused by rank 0 on every rank") {
  TempDir dir("sk-bad-dir");
  const auto first = launch(2, tiny_run(dir / "run", {"--steps=4", "--batch_size=4"}));
  REQUIRE(first.exit_code == 0);
  const auto before = slurp(dir / "run/metrics.jsonl");
  const auto second = launch(2, tiny_run(dir / "run", {"--steps=4", "--batch_size=4"}));
  CHECK(second.exit_code != 0);
  CHECK(contains(second.output, "already holds a run"));
  CHECK(slurp(dir / "run/metrics.jsonl") == before);
}

TEST_CASE("a failure while training exits 1 through the launcher, a configuration error 2") {
  TempDir dir("sk-exit-codes");
  // A learning rate this large overflows the loss within a few steps on every rank.
  const auto diverged = launch(2, tiny_run(dir / "diverged", {"--steps=50", "--optimizer.lr=1e30"}));
  INFO(diverged.output);
  CHECK(diverged.exit_code == 1);
  CHECK(contains(diverged.output, "the loss became"));
  const auto unknown = launch(2, tiny_run(dir / "unknown", {"--steps=5", "--plugins=" + (dir / "missing.so")}));
  INFO(unknown.output);
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.output, "configuration error: plugin file"));
}
