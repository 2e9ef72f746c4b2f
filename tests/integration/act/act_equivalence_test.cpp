// ACT under ddp, fsdp, HSDP and zero3 reproduces the one-process loss curve, and its summed loss
// over padded action chunks trains the same whatever the split into micro-steps and ranks.
//
// Tolerances: in fp32, ACT's weights after a few AdamW steps differ elementwise by up to 1e-2
// of a tensor's largest value between two runs that differ only in their thread count (the
// attention key biases have zero gradient in exact arithmetic, and AdamW turns their rounding
// noise into full-size steps). So weights are compared by the norm of their difference relative
// to how far training moved them (2.6e-3 between thread counts 1 and 2 over 6 steps), and the
// normalization itself by the first step's loss, computed from identical weights.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "../distributed/launch.hpp"
#include "../distributed/weights.hpp"
#include "act_runs.hpp"

using namespace shardkit::test;

namespace {

// Deterministic ACT: no VAE (its latent is sampled) and no dropout, so that every run computes
// the same function and only the order of floating-point sums differs.
std::vector<std::string> exact_act(const std::string& out, const std::vector<std::string>& extra) {
  return with(with(act_flags(out), {"--policy.use_vae=false", "--policy.dropout=0"}), extra);
}

/// ||a - b|| / ||b - init|| over every tensor of the model: how far apart two runs ended,
/// relative to how far training moved the reference.
double model_difference(const std::string& a, const std::string& b, const std::string& init) {
  const auto x = checkpoint_weights(a), y = checkpoint_weights(b), z = checkpoint_weights(init);
  REQUIRE(x.size() == y.size());
  double diff = 0, moved = 0;
  for (const auto& [name, t] : y) {
    diff += (x.at(name) - t).pow(2).sum().item<double>();
    moved += (t - z.at(name)).pow(2).sum().item<double>();
  }
  REQUIRE(moved > 0);
  return std::sqrt(diff / moved);
}

/// The weights ACT starts from (seed 3): one step at learning rate 0.
void initial_weights(const std::string& out) {
  run_ok(1, exact_act(out, {"--steps=1", "--batch_size=2", "--optimizer.lr=0", "--policy.optimizer_lr_backbone=0"}));
}

constexpr double kModelTol = 1e-2;  // about 4x the thread-count noise above

}  // namespace

TEST_CASE("act: ddp, fsdp, HSDP and zero3 reproduce one process x batch 8 for 20 steps") {
  TempDir dir("sk-act-eq");
  initial_weights(dir / "init");
  run_ok(1, exact_act(dir / "single", {"--steps=20", "--save_freq=20", "--batch_size=8"}));
  const auto want = losses(dir / "single");
  REQUIRE(want.size() == 20);
  struct Case {
    const char* name;
    int nproc;
    std::vector<std::string> flags;
  };
  const std::vector<Case> cases = {
      {"ddp2", 2, {"--batch_size=4", "--distributed_backend=ddp"}},
      {"fsdp2", 2, {"--batch_size=4", "--distributed_backend=fsdp"}},
      {"hsdp2x2", 4, {"--batch_size=2", "--parallelism.dp_replicate=2", "--parallelism.dp_shard=2"}},
      {"zero3", 2, {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=3"}},
  };
  for (const auto& c : cases) {
    INFO("case " << c.name);
    run_ok(c.nproc, exact_act(dir / c.name, with({"--steps=20", "--save_freq=20"}, c.flags)));
    const auto got = losses(dir / c.name);
    REQUIRE(got.size() == want.size());
    // Step 1 is computed from the same weights: only summation order differs.
    CHECK(std::abs(got[0] - want[0]) <= 1e-6 * want[0]);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-3 * want[i]);
    // The backbone's frozen batch-norm statistics are buffers: sharding must keep them as they were.
    const auto d = model_difference(dir / c.name, dir / "single", dir / "init");
    INFO("weights apart by " << d << " of the distance training moved them");
    CHECK(d <= kModelTol);
  }
  CHECK(want.back() < want.front());
}

TEST_CASE("act: padded action chunks train the same for (16,1,1), (1,16,1) and (2,2,4 ranks)") {
  TempDir dir("sk-act-split");
  initial_weights(dir / "init");
  struct Split {
    const char* name;
    int batch, accum, nproc;
  };
  // 16 samples per optimizer step, 6 updates; a third of the tiny dataset's frames lie within
  // a chunk of their episode's end, so micro-batches hold different numbers of valid actions.
  // One log line per optimizer step: the step's global mean loss.
  for (const auto& s : {Split{"b16_a1_r1", 16, 1, 1}, Split{"b1_a16_r1", 1, 16, 1}, Split{"b2_a2_r4", 2, 2, 4}}) {
    const int steps = 6 * s.accum;
    run_ok(s.nproc, exact_act(dir / s.name, {"--batch_size=" + std::to_string(s.batch),
                                             "--accelerator.gradient_accumulation.steps=" + std::to_string(s.accum),
                                             "--steps=" + std::to_string(steps), "--save_freq=" + std::to_string(steps),
                                             "--log_freq=" + std::to_string(s.accum),
                                             "--distributed_backend=" + std::string(s.nproc == 1 ? "single" : "ddp")}));
  }
  const auto want = losses(dir / "b16_a1_r1");
  REQUIRE(want.size() == 6);
  for (const auto* other : {"b1_a16_r1", "b2_a2_r4"}) {
    INFO(other);
    const auto got = losses(dir / other);
    REQUIRE(got.size() == want.size());
    // The first update's loss over the same 16 samples from the same weights: the sum over the
    // valid action elements of every micro-step and rank, divided by their global count.
    CHECK(std::abs(got[0] - want[0]) <= 1e-6 * want[0]);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-4 * want[i]);
    const auto d = model_difference(dir / other, dir / "b16_a1_r1", dir / "init");
    INFO("weights apart by " << d << " of the distance training moved them");
    CHECK(d <= kModelTol);
  }
}
