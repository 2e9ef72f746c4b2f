// --accelerator.fsdp.cpu_offload=true on cuda:0 (FSDP2's CPUOffloadPolicy): the shards, gradients
// and optimizer state in pinned host memory, the optimizer stepping on the CPU, and the same loss
// curve as the run that keeps everything on the GPU.
#include <catch2/catch.hpp>

#include "../integration/distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("fsdp with cpu_offload on cuda:0 trains the loss curve of fsdp without it", "[gpu][fsdp]") {
  TempDir dir("sk-gpu-offload");
  const auto run = [&](const std::string& name, const std::string& offload) {
    return run_program("shardkit-train", {"--output_dir=" + (dir / name), "--policy.device=cuda", "--steps=20",
                                          "--batch_size=16", "--log_freq=1", "--seed=7", "--save_freq=20",
                                          "--distributed_backend=fsdp", "--policy.hidden_dim=256",
                                          "--accelerator.fsdp.cpu_offload=" + offload});
  };
  const auto gpu = run("gpu", "false");
  INFO(gpu.output);
  REQUIRE(gpu.exit_code == 0);
  const auto offloaded = run("offloaded", "true");
  INFO(offloaded.output);
  REQUIRE(offloaded.exit_code == 0);
  CHECK(contains(offloaded.output, "CPU offload: the shards, their gradients and AdamW's state"));
  const auto a = losses(dir / "gpu");
  const auto b = losses(dir / "offloaded");
  REQUIRE(a.size() == 20);
  REQUIRE(b.size() == 20);
  // The optimizer steps on the CPU instead of the GPU: the same maths, rounded in another order.
  CHECK(worst_relative(b, a) <= 1e-4);
}
