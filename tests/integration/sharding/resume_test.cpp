// Sharded resume: bit-exact at the same topology, the checkpoint's own topology on resume, and a chain of
// backends resharding through dcp.
#include <filesystem>
#include <sstream>

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

/// The line --print_config printed for `key` (without the launcher's "[rank0]: "), or "".
std::string printed_line(const std::string& output, const std::string& key) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (const auto end = line.find("]: "); line.rfind("[rank", 0) == 0 && end != std::string::npos)
      line = line.substr(end + 3);
    if (line.rfind(key + " ", 0) == 0) return line;
  }
  return "";
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

TEST_CASE("LeRobot's resume command continues a --parallelism.dp_shard=2 run as fsdp, with its saved degrees") {
  TempDir dir("sk-shard-resume-saved");
  const auto full = dir / "full";
  // dp_shard=2 and --distributed_backend=auto: the checkpoint says fsdp only through its degrees.
  const auto first = launch_ok(2, full, {"--steps=20", "--save_freq=10", "--batch_size=4", "--checkpoint_format=dcp"},
                               {"--parallelism.dp_shard=2"});
  REQUIRE(contains(first, "backend fsdp, checkpoint format dcp"));
  const auto resumed = dir / "resumed";
  roll_back_copy(full, resumed, "000010");
  const auto config = resumed + "/checkpoints/last/pretrained_model/train_config.json";

  // --print_config with either resume command: the degrees are the checkpoint's, not defaults.
  for (const auto& how : {"--config_path=" + config, "--output_dir=" + resumed}) {
    INFO(how);
    const auto printed = launch(2, {"--resume=true", how, "--print_config=true"});
    INFO(printed.output);
    REQUIRE(printed.exit_code == 0);
    const auto shard = printed_line(printed.output, "parallelism.dp_shard");
    CHECK(contains(shard, "= 2 "));
    CHECK(contains(shard, "# saved config " + config + ":"));
    CHECK_FALSE(contains(shard, "default"));
    CHECK(contains(printed_line(printed.output, "parallelism.dp_replicate"), "# saved config " + config + ":"));
    CHECK(contains(printed_line(printed.output, "distributed_backend"), "resolves to fsdp"));
  }

  // Exactly LeRobot's command: fsdp over both processes again, and the uninterrupted curve bit for bit.
  const auto r = launch(2, {"--resume=true", "--config_path=" + config});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "resumed from"));
  CHECK(contains(r.output, "backend fsdp, checkpoint format dcp"));
  CHECK(contains(r.output, "(topology: dp_replicate=1, dp_shard=2)"));
  CHECK(contains(r.output, "fsdp: "));
  CHECK(contains(r.output, "sharded over dp_shard=2 x dp_replicate=1"));
  CHECK_FALSE(contains(r.output, "the checkpoint's mesh"));  // nothing refitted
  require_exact_continuation(full, resumed, 10);
}

TEST_CASE("an fsdp checkpoint resumed on another number of processes stays sharded, and says so") {
  TempDir dir("sk-shard-resume-refit");
  const auto run = dir / "two";
  launch_ok(2, run, {"--steps=10", "--save_freq=10", "--batch_size=4", "--checkpoint_format=dcp"},
            {"--parallelism.dp_shard=2"});

  // 3 processes: the saved dp_shard=2 cannot hold, the run shards over all 3 (not ddp by default).
  const auto three = dir / "three";
  roll_back_copy(run, three, "000010");
  const auto printed = launch(3, {"--resume=true", "--output_dir=" + three, "--print_config=true"});
  INFO(printed.output);
  REQUIRE(printed.exit_code == 0);
  const auto shard = printed_line(printed.output, "parallelism.dp_shard");
  CHECK(contains(shard, "= 3 "));
  CHECK(contains(shard, "# saved config "));
  CHECK(contains(shard, "2 resolved to 3 for WORLD_SIZE=3 in the environment"));
  auto r = launch(3, {"--resume=true", "--output_dir=" + three, "--steps=12"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "resumed from"));
  CHECK(contains(r.output, "the checkpoint's mesh dp_replicate=1, dp_shard=2 was written by 2 processes; on 3 processes "
                           "this run uses dp_replicate=1, dp_shard=3 (sharded over every process)"));
  CHECK(contains(r.output, "backend fsdp, checkpoint format dcp"));
  CHECK(contains(r.output, "(topology: dp_replicate=1, dp_shard=3)"));

  // 1 process: nothing to shard over; the warning says so.
  const auto one = dir / "one";
  roll_back_copy(run, one, "000010");
  r = run_program("shardkit-train", {"--resume=true", "--output_dir=" + one, "--steps=12"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "on 1 process this run uses dp_replicate=1, dp_shard=1 (one process holds the whole model)"));
  CHECK(contains(r.output, "backend single, checkpoint format dcp"));

  // A degree on the command line that does not fit is the user's own: refused as in any run.
  const auto asked = dir / "asked";
  roll_back_copy(run, asked, "000010");
  r = launch(3, {"--resume=true", "--output_dir=" + asked, "--parallelism.dp_shard=2"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "must equal the world size 3"));
}
