// A base model stored in bf16 is trained as fp32 master weights and saved as fp32: the start-up
// log says so, naming the stored dtype and what the checkpoints then hold.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"
#include "llama_support.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

/// A 2-step run from `base` into `out` on token data, `extra` appended.
std::vector<std::string> run_from(const std::string& out, const std::string& base, std::vector<std::string> extra) {
  return with({"--output_dir=" + out, "--policy.path=" + base,
               "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
               "--dataset.vocab_size=128", "--dataset.max_len=16", "--steps=2", "--save_freq=2", "--batch_size=2",
               "--num_threads=1", "--seed=3"},
              extra);
}

}  // namespace

TEST_CASE("a bf16 base model: the start-up log says training keeps and saves fp32") {
  TempDir dir("sk-llama-bf16-note");
  peer("make " + shell_quote(dir / "base:0:0:bfloat16"));
  for (const auto& [name, tensor] : read_tensors(dir / "base/model.safetensors")) {
    INFO(name);
    REQUIRE(tensor.scalar_type() == torch::kBFloat16);
  }

  const auto full = run_program("shardkit-train", run_from(dir / "full", dir / "base", {}));
  INFO(full.output);
  REQUIRE(full.exit_code == 0);
  // Today: not a word about it.
  CHECK(contains(full.output, "--policy.path=" + dir / "base" + " stores its weights in bfloat16 ("));
  CHECK(contains(full.output, ": training keeps float32 master weights"));
  CHECK(contains(full.output, "each checkpoint's model.safetensors holds float32 and its config.json says "
                              "\"torch_dtype\": \"float32\""));
  // ... which is what the checkpoint holds.
  for (const auto& [name, tensor] : read_tensors(dir / "full/checkpoints/last/pretrained_model/model.safetensors")) {
    INFO(name);
    CHECK(tensor.scalar_type() == torch::kFloat32);
  }

  // A LoRA run names what it saves: the adapters.
  const auto lora = run_program("shardkit-train", run_from(dir / "lora", dir / "base", {"--peft.r=4"}));
  INFO(lora.output);
  REQUIRE(lora.exit_code == 0);
  CHECK(contains(lora.output, "the adapters of each checkpoint and merged_model/ (--peft.merge) hold float32"));

  // An fp32 base gets the short form.
  peer("make " + shell_quote(dir / "fp32:0:0"));
  const auto plain = run_program("shardkit-train", run_from(dir / "plain", dir / "fp32", {}));
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  CHECK(contains(plain.output, "stores its weights in float32 ("));
  CHECK(contains(plain.output, "training keeps them and checkpoints save them in float32"));
}
