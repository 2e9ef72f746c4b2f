// config.json's torch_dtype is the dtype model.safetensors holds, under every backend with bf16
// mixed precision, in checkpoints and in merged_model/ (transformers loads the weights as it says).
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <set>
#include <vector>

#include "../distributed/launch.hpp"
#include "llama_support.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

/// transformers' name of a dtype.
std::string hf_dtype(torch::ScalarType t) {
  if (t == torch::kBFloat16) return "bfloat16";
  if (t == torch::kHalf) return "float16";
  if (t == torch::kDouble) return "float64";
  if (t == torch::kFloat) return "float32";
  return std::string(c10::toString(t));
}

/// The one dtype of every tensor in `folder`'s weights file `file`.
std::string stored_dtype(const std::string& folder, const std::string& file) {
  std::set<std::string> dtypes;
  for (const auto& [name, tensor] : read_tensors(folder + "/" + file)) dtypes.insert(hf_dtype(tensor.scalar_type()));
  REQUIRE(dtypes.size() == 1);
  return *dtypes.begin();
}

/// config.json's "torch_dtype" in `folder`.
std::string config_dtype(const std::string& folder) {
  const auto config = boost::json::parse(slurp(folder + "/config.json")).as_object();
  REQUIRE(config.contains("torch_dtype"));
  return std::string(config.at("torch_dtype").as_string());
}

/// A 2-step bf16 llama run into `out` on `nproc` processes with `extra` flags.
ProcessResult bf16_run(int nproc, const std::string& out, std::vector<std::string> extra) {
  const auto args = with({"--output_dir=" + out, "--policy.type=llama", "--policy.vocab_size=64",
                          "--policy.hidden_size=16", "--policy.intermediate_size=32", "--policy.num_attention_heads=2",
                          "--policy.max_position_embeddings=32",
                          "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets",
                          "--dataset.type=tokens_fixture", "--dataset.vocab_size=64", "--dataset.max_len=12",
                          "--accelerator.mixed_precision=bf16", "--steps=2", "--save_freq=2", "--batch_size=2",
                          "--log_freq=1", "--seed=3", "--num_threads=1", "--distributed.timeout_s=120"},
                         extra);
  return nproc == 1 ? run_program("shardkit-train", args) : launch(nproc, args);
}

}  // namespace

TEST_CASE("config.json's torch_dtype is the dtype model.safetensors holds, under every backend in bf16") {
  TempDir dir("sk-llama-dtype");
  struct Run {
    std::string name;
    int nproc;
    std::vector<std::string> extra;
  };
  const std::vector<Run> runs = {
      {"single", 1, {}},
      {"ddp", 2, {"--distributed_backend=ddp"}},
      {"fsdp", 2, {"--distributed_backend=fsdp", "--parallelism.dp_shard=2"}},
      {"zero1", 2, {"--distributed_backend=zero", "--accelerator.zero.stage=1"}},
      {"zero3", 2, {"--distributed_backend=zero", "--accelerator.zero.stage=3"}},
  };
  for (const auto& [name, nproc, extra] : runs) {
    INFO(name);
    const auto r = bf16_run(nproc, dir / name, extra);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto saved = dir / name + "/checkpoints/last/pretrained_model";
    // Today fsdp and zero3 write "bfloat16" over fp32 tensors.
    CHECK(config_dtype(saved) == stored_dtype(saved, "model.safetensors"));
  }

  // merged_model/ of a LoRA run under fsdp in bf16, from the fsdp run's checkpoint as its base.
  const auto base = dir / "fsdp/checkpoints/last/pretrained_model";
  const auto r = bf16_run(2, dir / "merged", {"--policy.path=" + base, "--distributed_backend=fsdp",
                                              "--parallelism.dp_shard=2", "--peft.r=4", "--peft.merge=true"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto merged = dir / "merged/merged_model";
  CHECK(config_dtype(merged) == stored_dtype(merged, "model.safetensors"));
  // The adapter checkpoint's config.json describes the base it was trained on, stored in fp32.
  CHECK(config_dtype(dir / "merged/checkpoints/last/pretrained_model") == stored_dtype(base, "model.safetensors"));
}
