// fsdp, HSDP and zero 1-3 through the launcher reproduce the single-process loss curve (fp32, Gloo).
#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

const std::vector<std::string> kCommon = {"--steps=50", "--checkpoint_format=dcp", "--save_freq=50"};
const std::vector<std::string> kAccum = {"--steps=50", "--checkpoint_format=dcp", "--save_freq=50",
                                         "--accelerator.gradient_accumulation.steps=2"};

struct Case {
  const char* name;
  int nproc;
  std::vector<std::string> flags;
};

}  // namespace

TEST_CASE("fsdp, HSDP and zero 1-3 reproduce one process x batch 8 for 50 steps") {
  TempDir dir("sk-shard-eq");
  single_ok(dir / "single", kCommon, {"--batch_size=8"});
  const auto want = losses(dir / "single");
  const std::vector<Case> cases = {
      {"fsdp2", 2, {"--batch_size=4", "--distributed_backend=fsdp"}},
      {"fsdp2_keep", 2, {"--batch_size=4", "--distributed_backend=fsdp", "--accelerator.fsdp.reshard_after_forward=false"}},
      {"fsdp2_noprefetch", 2, {"--batch_size=4", "--distributed_backend=fsdp", "--accelerator.fsdp.prefetch=false"}},
      {"hsdp2x2", 4, {"--batch_size=2", "--parallelism.dp_replicate=2", "--parallelism.dp_shard=2"}},
      {"zero1", 2, {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=1"}},
      {"zero2", 2, {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=2",
                    "--accelerator.zero.reduce_bucket_size=3000"}},
      {"zero3", 2, {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=3",
                    "--accelerator.zero.stage3_param_persistence_threshold=0"}},
      {"zero3_persist", 2, {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=3"}},
      {"fsdp2_ignored", 2, {"--batch_size=4", "--distributed_backend=fsdp", "--accelerator.fsdp.ignored_modules=^head$"}},
      {"fsdp2_min_params", 2, {"--batch_size=4", "--distributed_backend=fsdp", "--accelerator.fsdp.min_num_params=1000"}},
  };
  for (const auto& c : cases) {
    {
      INFO("case " << c.name);
      const auto output = launch_ok(c.nproc, dir / c.name, kCommon, c.flags);
      require_same_curve(losses(dir / c.name), want);
      if (std::string(c.name) == "hsdp2x2") {
        CHECK(contains(output, "backend fsdp"));
        CHECK(contains(output, "topology: dp_replicate=2, dp_shard=2"));
      }
      if (std::string(c.name) == "fsdp2") {
        CHECK(contains(output, "fsdp: 3 units (2 wrap blocks), 0 whole parameters, sharded over dp_shard=2"));
        CHECK(contains(output, "fsdp: memory plan per rank: parameters"));
      }
      if (std::string(c.name) == "fsdp2_ignored") CHECK(contains(output, "2 whole parameters"));
      if (std::string(c.name) == "zero3_persist") CHECK(contains(output, "whole parameters"));
    }
  }
}

TEST_CASE("fsdp at 3 ranks (uneven rows, padded) reproduces one process x batch 12") {
  TempDir dir("sk-shard-eq3");
  single_ok(dir / "single", kCommon, {"--batch_size=12"});
  launch_ok(3, dir / "fsdp3", kCommon, {"--batch_size=4", "--distributed_backend=fsdp"});
  require_same_curve(losses(dir / "fsdp3"), losses(dir / "single"));
}

TEST_CASE("with gradient accumulation (no sync on the first micro-step) every sharded backend matches") {
  TempDir dir("sk-shard-acc");
  single_ok(dir / "single", kAccum, {"--batch_size=4"});
  const auto want = losses(dir / "single");
  const std::vector<Case> cases = {
      {"fsdp2", 2, {"--batch_size=2", "--distributed_backend=fsdp"}},
      {"hsdp2x2", 4, {"--batch_size=1", "--parallelism.dp_replicate=2", "--parallelism.dp_shard=2"}},
      {"zero1", 2, {"--batch_size=2", "--distributed_backend=zero", "--accelerator.zero.stage=1"}},
      {"zero2", 2, {"--batch_size=2", "--distributed_backend=zero", "--accelerator.zero.stage=2"}},
      {"zero3", 2, {"--batch_size=2", "--distributed_backend=zero", "--accelerator.zero.stage=3"}},
  };
  for (const auto& c : cases) {
    {
      INFO("case " << c.name);
      launch_ok(c.nproc, dir / c.name, kAccum, c.flags);
      require_same_curve(losses(dir / c.name), want);
    }
  }
}

TEST_CASE("a weight tied inside one wrap unit trains under fsdp like one process") {
  TempDir dir("sk-shard-tied");
  const auto args = [&](const std::string& out, const std::string& batch) {
    return std::vector<std::string>{"--output_dir=" + out, "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/policies",
                                    "--policy.type=wrap_fixture", "--policy.tie=within", "--steps=50", "--batch_size=" + batch,
                                    "--optimizer.lr=0.01",
                                    "--checkpoint_format=dcp", "--save_freq=50", "--num_threads=1", "--seed=7",
                                    "--log_freq=1", "--dataset.num_samples=256", "--distributed.timeout_s=60"};
  };
  const auto single = run_program("shardkit-train", args(dir / "single", "8"));
  INFO(single.output);
  REQUIRE(single.exit_code == 0);
  auto sharded = args(dir / "fsdp", "4");
  sharded.push_back("--distributed_backend=fsdp");
  const auto r = launch(2, sharded);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  require_same_curve(losses(dir / "fsdp"), losses(dir / "single"));
}
