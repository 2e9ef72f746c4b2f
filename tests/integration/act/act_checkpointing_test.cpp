// ACT with activation checkpointing (dropout and the VAE's sampling on) trains on the curve it
// trains on without, under one process, ddp, fsdp and zero3, with LoRA and bf16.
//
// The recompute runs the same operations on the same values with the generator states of the
// first forward, so the curves agree exactly in practice; the stated tolerance is 1e-6 relative.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../distributed/launch.hpp"
#include "act_runs.hpp"

using namespace shardkit::test;

namespace {

constexpr double kCheckpointingRelTol = 1e-6;

struct Case {
  const char* name;
  int nproc;
  std::vector<std::string> flags;
};

void require_same_losses(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  REQUIRE_FALSE(want.empty());
  for (const auto loss : got) REQUIRE(std::isfinite(loss));
  const auto worst = worst_relative(got, want);
  INFO("largest relative loss difference " << worst);
  CHECK(worst <= kCheckpointingRelTol);
}

}  // namespace

TEST_CASE("act with activation checkpointing is on the plain curve: one process, ddp, fsdp, zero3, selective, bf16") {
  TempDir dir("sk-act-ac");
  const std::vector<std::string> common{"--steps=6", "--save_freq=6", "--policy.dropout=0.1"};
  const std::vector<Case> cases = {
      {"single", 1, {"--batch_size=4"}},
      {"ddp", 2, {"--batch_size=2", "--distributed_backend=ddp"}},
      {"fsdp", 2, {"--batch_size=2", "--distributed_backend=fsdp"}},
      {"zero3", 2, {"--batch_size=2", "--distributed_backend=zero", "--accelerator.zero.stage=3",
                    "--accelerator.zero.stage3_param_persistence_threshold=0"}},
      {"fsdp_bf16", 2, {"--batch_size=2", "--distributed_backend=fsdp", "--accelerator.mixed_precision=bf16"}},
  };
  for (const auto& c : cases) {
    INFO("case " << c.name);
    const auto flags = with(common, c.flags);
    run_ok(c.nproc, with(act_flags(dir / (std::string(c.name) + "_plain")), flags));
    const auto full = run_ok(c.nproc, with(act_flags(dir / (std::string(c.name) + "_full")),
                                           with(flags, {"--accelerator.activation_checkpointing.mode=full"})));
    CHECK(contains(full, "activation checkpointing (full): 4 of the wrap units of the wrap_modules() of policy 'act'"));
    const auto want = losses(dir / (std::string(c.name) + "_plain"));
    require_same_losses(losses(dir / (std::string(c.name) + "_full")), want);
    if (std::string(c.name) == "single") {
      const auto selective =
          run_ok(1, with(act_flags(dir / "single_selective"),
                         with(flags, {"--accelerator.activation_checkpointing.mode=selective",
                                      "--accelerator.activation_checkpointing.every=2"})));
      CHECK(contains(selective, "activation checkpointing (selective, every 2): 2 of the wrap units"));
      require_same_losses(losses(dir / "single_selective"), want);
    }
  }
}

TEST_CASE("act + LoRA under fsdp with activation checkpointing is on the plain LoRA curve") {
  TempDir dir("sk-act-ac-lora");
  const auto base = run_ok(1, with(act_flags(dir / "base"), {"--steps=2", "--batch_size=4", "--save_freq=2"}));
  const auto base_path = dir / "base/checkpoints/last/pretrained_model";
  const auto lora = [&](const std::string& name, const std::vector<std::string>& extra) {
    std::vector<std::string> args;
    for (const auto& a : act_flags(dir / name))
      if (a.rfind("--policy.", 0) != 0) args.push_back(a);
    return with(args, with({"--policy.path=" + base_path, "--peft.method_type=LORA", "--peft.r=4", "--steps=4",
                            "--batch_size=2", "--distributed_backend=fsdp"},
                           extra));
  };
  run_ok(2, lora("plain", {}));
  const auto out = run_ok(2, lora("full", {"--accelerator.activation_checkpointing.mode=full"}));
  CHECK(contains(out, "LoRA: "));
  require_same_losses(losses(dir / "full"), losses(dir / "plain"));
}

TEST_CASE("activation checkpointing refuses a mode it does not know and units it cannot find") {
  TempDir dir("sk-act-ac-bad");
  auto r = run_program("shardkit-train", with(act_flags(dir / "a"), {"--steps=1", "--accelerator.activation_checkpointing.mode=ful"}));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "accelerator.activation_checkpointing.mode"));
  CHECK(contains(r.output, "must be one of: none, full, selective"));
  r = run_program("shardkit-train", with(act_flags(dir / "b"), {"--steps=1", "--accelerator.activation_checkpointing.mode=selective",
                                                                "--accelerator.activation_checkpointing.every=9"}));
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "--accelerator.activation_checkpointing.mode=selective with "
                           "--accelerator.activation_checkpointing.every=9 checkpoints none of the 4 wrap units"));
  CHECK_FALSE(contains(r.output, "Traceback"));
}
