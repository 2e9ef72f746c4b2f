// --distributed_backend=deepspeed with a DeepSpeed JSON config: fields applied, "auto" resolved, contradictions refused.
#include <fstream>

#include "sharded_runs.hpp"

using namespace shardkit::test;

namespace {

std::string write_config(const std::string& path, const std::string& json) {
  std::ofstream(path) << json;
  return path;
}

std::vector<std::string> with_config(const std::string& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--steps=10", "--save_freq=10", "--checkpoint_format=dcp",
                                   "--distributed_backend=deepspeed", "--accelerator.zero.config_file=" + config};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("a DeepSpeed config sets the stage, accumulation and clipping; auto takes shardkit's values") {
  TempDir dir("sk-ds-config");
  const auto config = write_config(dir / "ds_config.json", R"({
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": 2,
  "gradient_clipping": 0.5,
  "bf16": {"enabled": false},
  "zero_optimization": {"stage": 2, "overlap_comm": true, "allgather_bucket_size": 500000000}
})");
  const auto out = launch_ok(2, dir / "run", with_config(config), {"--batch_size=2"});
  CHECK(contains(out, "Effective batch size: 2 x 2 dp workers x 2 grad accum = 8"));
  CHECK(contains(out, "backend zero"));
  CHECK(contains(out, "shardkit does not implement these DeepSpeed fields and ignores them: "
                      "zero_optimization.allgather_bucket_size=500000000"));
  const auto saved = slurp(dir / "run/checkpoints/last/pretrained_model/train_config.json");
  CHECK(contains(saved, "\"stage\": 2"));
  CHECK(contains(saved, "\"grad_clip_norm\": 0.5"));
}

TEST_CASE("a DeepSpeed config's bf16 and fp16 sections set the mixed precision, as Hugging Face's integration does") {
  TempDir dir("sk-ds-precision");
  const auto bf16 = write_config(dir / "bf16.json", R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}})");
  const auto out = launch_ok(2, dir / "bf16", with_config(bf16), {"--batch_size=2"});
  CHECK(contains(slurp(dir / "bf16/checkpoints/last/pretrained_model/train_config.json"),
                 "\"mixed_precision\": \"bf16\""));
  CHECK(contains(slurp(dir / "bf16/checkpoints/last/training_state/training_step.json"), "\"precision\": \"bf16\""));
  const auto fp16 = write_config(dir / "fp16.json", R"({
  "fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 12, "loss_scale_window": 500, "hysteresis": 2},
  "zero_optimization": {"stage": 2}})");
  const auto fp16_out = launch_ok(2, dir / "fp16", with_config(fp16, {"--accelerator.mixed_precision=fp16"}),
                                  {"--batch_size=2"});
  const auto saved = slurp(dir / "fp16/checkpoints/last/pretrained_model/train_config.json");
  CHECK(contains(saved, "\"init_scale\": 4096"));
  CHECK(contains(saved, "\"growth_interval\": 500"));
  CHECK(contains(fp16_out, "ignores them: fp16.hysteresis=2"));
}

TEST_CASE("a DeepSpeed field that contradicts a flag, mixed precision and a wrong train_batch_size are refused") {
  TempDir dir("sk-ds-bad");
  const auto contradict = write_config(dir / "a.json", R"({"train_micro_batch_size_per_gpu": 4})");
  auto r = launch(2, tiny_run(dir / "a", with_config(contradict, {"--batch_size=8"})));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "a.json:1:36: train_micro_batch_size_per_gpu=4 contradicts --batch_size=8; make them agree"));

  const auto bf16 = write_config(dir / "b.json", R"({"bf16": {"enabled": true}})");
  r = launch(2, tiny_run(dir / "b", with_config(bf16, {"--accelerator.mixed_precision=fp16"})));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "bf16.enabled=true asks for --accelerator.mixed_precision=bf16, which contradicts "
                           "--accelerator.mixed_precision=fp16"));

  const auto batch = write_config(dir / "c.json", R"({"train_batch_size": 64})");
  r = launch(2, tiny_run(dir / "c", with_config(batch, {"--batch_size=4"})));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "train_batch_size=64 is not batch_size 4 x gradient accumulation 1 x 2 processes = 8"));

  const auto stage = write_config(dir / "d.json", R"({"zero_optimization": {"stage": 1}})");
  r = launch(2, tiny_run(dir / "d", with_config(stage, {"--accelerator.zero.stage=3"})));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "zero_optimization.stage=1 contradicts --accelerator.zero.stage=3"));
}
