// Sharded resume: bit-exact at the same topology, and a chain of backends resharding through dcp.
#include <filesystem>

#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

void require_exact_continuation(const std::string& full, const std::string& resumed, std::size_t from) {
  const auto a = read_metrics(full);
  const auto b = read_metrics(resumed);
  REQUIRE(a.size() == b.size());
  REQUIRE(a.size() > from);
  for (std::size_t i = from; i < a.size(); ++i) {
    CHECK(b[i].step == a[i].step);
    CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));  // the same digits: bit for bit
    CHECK(b[i].raw.at("grad_norm") == a[i].raw.at("grad_norm"));
  }
}

}  // namespace

TEST_CASE("every sharded backend resumes bit for bit at the same topology") {
  TempDir dir("sk-shard-resume");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"fsdp", {"--distributed_backend=fsdp"}},
      {"zero1", {"--distributed_backend=zero", "--accelerator.zero.stage=1"}},
      {"zero2", {"--distributed_backend=zero", "--accelerator.zero.stage=2"}},
      {"zero3", {"--distributed_backend=zero", "--accelerator.zero.stage=3",
                 "--accelerator.zero.stage3_param_persistence_threshold=100"}},
  };
  for (const auto& [name, flags] : cases) {
    INFO("case " << name);
    const auto full = dir / (name + "_full");
    launch_ok(2, full, {"--steps=30", "--save_freq=15", "--batch_size=4", "--checkpoint_format=dcp"}, flags);
    const auto resumed = dir / (name + "_resumed");
    roll_back_copy(full, resumed, "000015");
    const auto r = launch(2, {"--resume=true", "--output_dir=" + resumed});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "resumed from"));
    require_exact_continuation(full, resumed, 15);
  }
}

TEST_CASE("fsdp(2) -> zero3(3) -> ddp(2) -> single(1) -> fsdp(2) through dcp follows the uninterrupted curve") {
  TempDir dir("sk-shard-chain");
  // Global batch 12 at every topology, so every stage sees the samples one process would.
  single_ok(dir / "single", {"--steps=50", "--save_freq=10", "--batch_size=12", "--checkpoint_format=dcp"}, {});
  const auto run = dir / "chain";
  launch_ok(2, run, {"--steps=10", "--save_freq=10", "--batch_size=6", "--checkpoint_format=dcp"},
            {"--distributed_backend=fsdp"});
  struct Stage {
    int nproc;
    std::vector<std::string> flags;
  };
  const std::vector<Stage> stages = {
      {3, {"--steps=20", "--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=3"}},
      {2, {"--steps=30", "--batch_size=6", "--distributed_backend=ddp"}},
      {1, {"--steps=40", "--batch_size=12", "--distributed_backend=single"}},
      {2, {"--steps=50", "--batch_size=6", "--distributed_backend=fsdp"}},
  };
  for (const auto& stage : stages) {
    std::vector<std::string> args = {"--resume=true", "--output_dir=" + run};
    args.insert(args.end(), stage.flags.begin(), stage.flags.end());
    const auto r = stage.nproc == 1 ? run_program("shardkit-train", args) : launch(stage.nproc, args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "resumed from"));
  }
  const auto got = losses(run);
  const auto want = losses(dir / "single");
  REQUIRE(got.size() == 50);
  // Every stage starts from the weights and AdamW moments the previous one saved: a lost or
  // misplaced shard would show as a jump in the curve at steps 11, 21, 31 or 41.
  require_same_curve(got, want);
}

TEST_CASE("fsdp with the default safetensors format writes whole files that one process resumes from") {
  TempDir dir("sk-shard-st");
  single_ok(dir / "single", {"--steps=20", "--save_freq=10", "--batch_size=8"}, {});
  // --parallelism.dp_shard=2 picks fsdp; the shards are gathered into LeRobot's whole files.
  const auto out = launch_ok(2, dir / "fsdp", {"--steps=10", "--save_freq=10", "--batch_size=4"},
                             {"--parallelism.dp_shard=2"});
  CHECK(contains(out, "backend fsdp, checkpoint format safetensors"));
  CHECK(std::filesystem::is_regular_file(dir / "fsdp/checkpoints/000010/pretrained_model/model.safetensors"));
  CHECK(std::filesystem::is_regular_file(dir / "fsdp/checkpoints/000010/training_state/optimizer_state.safetensors"));
  const auto r = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (dir / "fsdp"), "--steps=20",
                                                "--batch_size=8", "--distributed_backend=single",
                                                "--parallelism.dp_shard=1"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Weights and AdamW moments gathered from both shards: the curve continues as one process's.
  require_same_curve(losses(dir / "fsdp"), losses(dir / "single"));
}
