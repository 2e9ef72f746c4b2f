// fsdp past two shards: more shards than some parameters have rows, so the last ranks hold empty
// pieces (torch.chunk's layout, as FSDP2's). Every built-in policy follows one process.
#include "../act/act_runs.hpp"
#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

const std::vector<std::string> kKeep = {"--accelerator.fsdp.reshard_after_forward=false"};

/// --parallelism.dp_shard=N (and more) on `nproc` processes with `flags`, and its losses.
std::vector<double> sharded(int nproc, const std::string& out, const std::vector<std::string>& flags,
                            const std::vector<std::string>& extra) {
  const auto r = launch(nproc, with(flags, extra));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return losses(out);
}

std::vector<double> alone(const std::string& out, const std::vector<std::string>& flags) {
  const auto r = run_program("shardkit-train", flags);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return losses(out);
}

std::string shards(int n) { return "--parallelism.dp_shard=" + std::to_string(n); }
std::string batch(int n) { return "--batch_size=" + std::to_string(n); }

// bf16 runs are compared with ddp's bf16 run on as many ranks: both compute with the same bf16
// weights and reduce in fp32, so only the order of sums differs, amplified by bf16 rounding.
constexpr double kBf16RelTol = 2e-2;

}  // namespace

TEST_CASE("mlp: fsdp at 3, 4 and 8 shards (empty pieces), with and without resharding, and in bf16") {
  TempDir dir("sk-many-mlp");
  // The tiny mlp's head is [4, 32]: from 5 shards on some ranks hold none of its rows.
  const std::vector<std::string> common = {"--steps=20", "--save_freq=20"};
  const auto want = alone(dir / "single", tiny_run(dir / "single", with(common, {batch(24)})));
  for (const int n : {3, 4, 8}) {
    const auto tag = std::to_string(n);
    INFO(n << " shards");
    const auto flags = with(common, {batch(24 / n), shards(n)});
    require_same_curve(sharded(n, dir / ("fsdp" + tag), tiny_run(dir / ("fsdp" + tag), flags), {}), want);
    require_same_curve(sharded(n, dir / ("keep" + tag), tiny_run(dir / ("keep" + tag), flags), kKeep), want);
  }
  // Mixed precision at 8 shards against ddp's bf16 run at 8 ranks.
  const auto bf16 = with(common, {batch(3), "--accelerator.mixed_precision=bf16"});
  const auto ddp = sharded(8, dir / "ddp-bf16", tiny_run(dir / "ddp-bf16", with(bf16, {"--distributed_backend=ddp"})), {});
  const auto fsdp = sharded(8, dir / "fsdp-bf16", tiny_run(dir / "fsdp-bf16", with(bf16, {shards(8)})), {});
  REQUIRE(fsdp.size() == ddp.size());
  INFO("bf16: worst relative loss difference " << worst_relative(fsdp, ddp));
  CHECK(worst_relative(fsdp, ddp) <= kBf16RelTol);
  require_trained(fsdp);
}

TEST_CASE("mlp: 32 ranks of fsdp, HSDP 4x8, zero3 and ddp follow one process") {
  TempDir dir("sk-many-32");
  const std::vector<std::string> common = {"--steps=12", "--save_freq=12", "--optimizer.lr=3e-3", batch(1)};
  const auto want = alone(dir / "single", tiny_run(dir / "single", with(common, {batch(32)})));
  require_same_curve(sharded(32, dir / "fsdp32", tiny_run(dir / "fsdp32", with(common, {shards(32)})), {}), want);
  const auto hsdp = with(common, {"--parallelism.dp_replicate=4", shards(8)});
  const auto r = launch(32, tiny_run(dir / "hsdp", hsdp));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "topology: dp_replicate=4, dp_shard=8"));
  require_same_curve(losses(dir / "hsdp"), want);
  // The flat zero layout and ddp's buckets at the same size: ranks whose range starts past a
  // unit's or bucket's end.
  const auto zero3 = with(common, {"--distributed_backend=zero", "--accelerator.zero.stage=3",
                                   "--accelerator.zero.stage3_param_persistence_threshold=0"});
  require_same_curve(sharded(32, dir / "zero3", tiny_run(dir / "zero3", zero3), {}), want);
  const auto ddp = with(common, {"--distributed_backend=ddp"});
  require_same_curve(sharded(32, dir / "ddp", tiny_run(dir / "ddp", ddp), {}), want);
}

TEST_CASE("act: fsdp at 3, 4 and 8 shards follows one process, with and without resharding") {
  TempDir dir("sk-many-act");
  // No VAE and no dropout: every run computes the same function (see act_equivalence_test).
  const auto act = [&](const std::string& name, std::vector<std::string> extra) {
    return with(with(act_flags(dir / name), {"--policy.use_vae=false", "--policy.dropout=0", "--steps=6",
                                             "--save_freq=6"}),
                extra);
  };
  for (const int n : {3, 4, 8}) {
    const auto tag = std::to_string(n);
    INFO(n << " shards");
    const auto want = alone(dir / ("single" + tag), act("single" + tag, {batch(n)}));
    for (const auto& [name, extra] : {std::pair{"fsdp" + tag, std::vector<std::string>{}}, std::pair{"keep" + tag, kKeep}}) {
      INFO(name);
      const auto got = sharded(n, dir / name, act(name, {batch(1), shards(n)}), extra);
      REQUIRE(got.size() == want.size());
      CHECK(std::abs(got[0] - want[0]) <= 1e-6 * want[0]);  // the same weights: only summation order differs
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-3 * want[i]);
    }
  }
}

TEST_CASE("llama: fsdp at 3, 4 and 8 shards follows one process, with and without resharding, and in bf16") {
  TempDir dir("sk-many-llama");
  // k_proj and v_proj are [12, 24]: at 8 shards two ranks hold none of their rows.
  const auto llama = [&](const std::string& name, std::vector<std::string> extra) {
    return with({"--output_dir=" + (dir / name), "--policy.type=llama", "--policy.vocab_size=100",
                 "--policy.hidden_size=24", "--policy.intermediate_size=40", "--policy.num_attention_heads=4",
                 "--policy.num_key_value_heads=2", "--policy.max_position_embeddings=64",
                 "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
                 "--dataset.vocab_size=100", "--dataset.max_len=12", "--steps=12", "--save_freq=12",
                 "--optimizer.lr=2e-2", "--log_freq=1", "--seed=3", "--num_threads=1", "--distributed.timeout_s=120"},
                extra);
  };
  const auto want = alone(dir / "single", llama("single", {batch(24)}));
  for (const int n : {3, 4, 8}) {
    const auto tag = std::to_string(n);
    INFO(n << " shards");
    require_same_curve(sharded(n, dir / ("fsdp" + tag), llama("fsdp" + tag, {batch(24 / n), shards(n)}), {}), want);
    require_same_curve(sharded(n, dir / ("keep" + tag), llama("keep" + tag, {batch(24 / n), shards(n)}), kKeep), want);
  }
  const auto ddp = sharded(8, dir / "ddp-bf16",
                           llama("ddp-bf16", {batch(3), "--accelerator.mixed_precision=bf16", "--distributed_backend=ddp"}), {});
  const auto fsdp = sharded(8, dir / "fsdp-bf16", llama("fsdp-bf16", {batch(3), "--accelerator.mixed_precision=bf16", shards(8)}), {});
  REQUIRE(fsdp.size() == ddp.size());
  INFO("bf16: worst relative loss difference " << worst_relative(fsdp, ddp));
  CHECK(worst_relative(fsdp, ddp) <= kBf16RelTol);
}

TEST_CASE("a dcp checkpoint from 8 shards (some empty) loads in PyTorch, converts, and resumes at 3 and 1 exactly") {
  TempDir dir("sk-many-dcp");
  // Twin 8-shard runs: the safetensors one gathers the whole weights through the same empty pieces.
  const std::string st = dir / "st", dcp = dir / "dcp";
  for (const auto& [out, format] : {std::pair{st, "safetensors"}, std::pair{dcp, "dcp"}}) {
    const auto r = launch(8, tiny_run(out, {"--steps=20", "--save_freq=10", batch(1), shards(8),
                                            std::string("--checkpoint_format=") + format}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  const auto step = "/checkpoints/000020";
  const auto compare = run_command(python() + " " +
                                   shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                               "/tests/integration/checkpoint/dcp_compare.py") +
                                   " " + shell_quote(dcp + step) + " " + shell_quote(st + step));
  INFO(compare.output);
  CHECK(compare.exit_code == 0);
  CHECK(contains(compare.output, "OK "));

  const auto merged = dir / "merged.safetensors";
  const auto c = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + dcp + step, "--output=" + merged});
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  CHECK(slurp(merged) == slurp(st + step + "/pretrained_model/model.safetensors"));

  for (const int nproc : {3, 1}) {
    INFO("resumed on " << nproc);
    std::map<std::string, std::vector<std::string>> resumed;
    for (const auto& [name, run] : {std::pair{"st", st}, std::pair{"dcp", dcp}}) {
      const auto to = dir / (name + std::to_string(nproc));
      roll_back_copy(run, to, "000010");
      std::vector<std::string> args = {"--resume=true", "--output_dir=" + to, "--steps=16"};
      if (nproc > 1) args.push_back(shards(nproc));  // resharded from 8 pieces to 3
      const auto r = launch(nproc, args);
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      for (const auto& line : read_metrics(to)) resumed[name].push_back(line.raw.at("loss"));
    }
    REQUIRE(resumed["dcp"].size() == 16);
    CHECK(resumed["dcp"] == resumed["st"]);  // the same digits: the same weights and optimizer state loaded
  }
}
