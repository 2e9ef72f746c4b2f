// Mixed precision: bf16 trains under every backend with fp32 masters saved; fp16's loss scaler skips overflowing updates and resumes.
#include <filesystem>
#include <regex>

#include "sharded_runs.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("bf16 trains under fsdp, zero 1 and 3, ddp and single, and checkpoints hold fp32 masters") {
  TempDir dir("sk-bf16");
  const std::vector<std::string> common = {"--steps=50", "--save_freq=50", "--checkpoint_format=dcp",
                                           "--accelerator.mixed_precision=bf16", "--batch_size=4"};
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"fsdp", {"--distributed_backend=fsdp"}},
      {"zero1", {"--distributed_backend=zero", "--accelerator.zero.stage=1"}},
      {"zero3", {"--distributed_backend=zero", "--accelerator.zero.stage=3"}},
      {"ddp", {"--distributed_backend=ddp"}},
  };
  for (const auto& [name, flags] : cases) {
    INFO("case " << name);
    const auto out = launch_ok(2, dir / name, common, flags);
    require_trained(losses(dir / name));
    if (name != "ddp") CHECK(contains(out, "mixed precision bf16 (params bfloat16, reduce float32, fp32 masters)"));
    // The saved weights are the fp32 masters: merge the DCP folder and read its dtypes.
    const std::string checkpoint = dir / (name + "/checkpoints/last");
    const auto merged = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + checkpoint});
    INFO(merged.output);
    REQUIRE(merged.exit_code == 0);
    const auto header = slurp(checkpoint + "/pretrained_model/model.safetensors").substr(0, 4096);
    CHECK(contains(header, "\"dtype\":\"F32\""));
    CHECK_FALSE(contains(header, "BF16"));
  }
  single_ok(dir / "single", common, {});
  require_trained(losses(dir / "single"));
}

TEST_CASE("fp16 skips the updates whose gradients overflow, records them, and resumes with its scale") {
  TempDir dir("sk-fp16");
  // 2^24 overflows fp16 gradients at first: the scaler halves it until updates go through.
  const std::vector<std::string> common = {"--steps=40", "--save_freq=20", "--checkpoint_format=dcp", "--batch_size=4",
                                           "--accelerator.mixed_precision=fp16", "--accelerator.fp16.init_scale=16777216"};
  const auto out = launch_ok(2, dir / "full", common, {"--distributed_backend=fsdp"});
  std::smatch m;
  const auto state = slurp(dir / "full/checkpoints/last/training_state/scaler_state.json");
  REQUIRE(std::regex_search(state, m, std::regex(R"("skipped_updates":(\d+))")));
  const auto recorded = std::stoul(m[1]);
  INFO(out);
  CHECK(recorded > 0);    // some updates overflowed and were skipped
  CHECK(recorded < 40);   // and the scale came down far enough to train
  // Each skip is logged once per rank with the scale it used.
  CHECK(count(out, "update skipped, loss scale now") == 2 * recorded);
  // Resuming at step 20 restores the scale: the continuation is bit for bit.
  roll_back_copy(dir / "full", dir / "resumed", "000020");
  const auto r = launch(2, {"--resume=true", "--output_dir=" + (dir / "resumed")});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto a = read_metrics(dir / "full");
  const auto b = read_metrics(dir / "resumed");
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 20; i < a.size(); ++i) CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));
}

TEST_CASE("a mixed-precision policy without param_dtype, and float16 without fp16, are refused") {
  TempDir dir("sk-mp-bad");
  auto r = launch(2, tiny_run(dir / "a", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                          "--accelerator.fsdp.mixed_precision_policy.reduce_dtype=float32"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--accelerator.fsdp.mixed_precision_policy.reduce_dtype is set but "
                           "--accelerator.fsdp.mixed_precision_policy.param_dtype is not"));
  r = launch(2, tiny_run(dir / "b", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                     "--accelerator.fsdp.mixed_precision_policy.param_dtype=float16"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "param_dtype=float16 needs --accelerator.mixed_precision=fp16"));
}
