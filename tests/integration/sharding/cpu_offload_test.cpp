// --accelerator.fsdp.cpu_offload=true on a CPU run: accepted, with the note that there is nothing to
// offload, and training is exactly what it is without it (tests/gpu/cpu_offload_test.cpp covers CUDA).
#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

TEST_CASE("cpu_offload on a CPU run changes nothing and says so") {
  TempDir dir("sk-cpu-offload");
  const auto run = [&](const std::string& name, const std::string& offload) {
    return launch(2, tiny_run(dir / name, {"--steps=6", "--batch_size=4", "--distributed_backend=fsdp",
                                           "--accelerator.fsdp.cpu_offload=" + offload}));
  };
  const auto plain = run("plain", "false");
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  const auto offload = run("offload", "true");
  INFO(offload.output);
  REQUIRE(offload.exit_code == 0);
  CHECK(contains(offload.output, "--accelerator.fsdp.cpu_offload=true: nothing to offload on a CPU run"));
  CHECK_FALSE(contains(offload.output, "CPU offload: the shards"));
  CHECK(losses(dir / "offload") == losses(dir / "plain"));
}
