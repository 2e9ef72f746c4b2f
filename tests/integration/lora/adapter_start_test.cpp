// An adapter checkpoint starts a new run (--policy.path=<its pretrained_model>): the base comes
// from adapter_config.json's base_model_name_or_path, the adapter is loaded on it and trained
// further with its own LoRA options, as PEFT's is_trainable=True; under one process and fsdp.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../llama/llama_support.hpp"
#include "lora_runs.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

/// A run from the adapter folder `adapter` alone (no --peft.* option), at learning rate `lr`.
std::vector<std::string> from_adapter(const std::string& out, const std::string& adapter, const std::string& lr,
                                      std::vector<std::string> extra) {
  return with({"--output_dir=" + out, "--policy.path=" + adapter,
               "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
               "--dataset.vocab_size=128", "--dataset.max_len=16", "--steps=2", "--batch_size=4",
               "--optimizer.lr=" + lr, "--log_freq=1", "--seed=4", "--num_threads=1", "--distributed.timeout_s=120"},
              extra);
}

}  // namespace

TEST_CASE("--policy.path at a LoRA checkpoint trains its adapter further on its base, with its options") {
  TempDir dir("sk-lora-from-adapter");
  peer("make " + shell_quote(dir / "base:0:0"));
  const auto first = launch(1, lora_run(dir / "first", dir / "base", 4,
                                        {"--peft.target_modules=q_proj,v_proj,down_proj",
                                         "--peft.full_training_modules=lm_head"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto adapter = dir / "first/checkpoints/last/pretrained_model";
  const auto trained = read_tensors(adapter + "/adapter_model.safetensors");

  // At learning rate 0 the new run's adapter is the one it started from, bitwise: loaded, not
  // a fresh one (whose lora_B is zero), with the same modules (the adapter's options).
  const auto again = launch(1, from_adapter(dir / "again", adapter, "0", {}));
  INFO(again.output);
  REQUIRE(again.exit_code == 0);  // before issue 26: "is a LoRA run's checkpoint: it holds a PEFT adapter"
  CHECK(contains(again.output, "--policy.path=" + adapter + " is a PEFT adapter: training it further on its base " +
                                   dir / "base"));
  CHECK(contains(again.output, "LoRA: continuing the adapter of " + adapter));
  const auto saved = dir / "again/checkpoints/last/pretrained_model";
  CHECK(same_tensors(read_tensors(saved + "/adapter_model.safetensors"), trained));
  const auto config = slurp(saved + "/adapter_config.json");
  CHECK(contains(config, R"("r": 4)"));
  CHECK(contains(config, R"("target_modules": ["q_proj", "v_proj", "down_proj"])"));
  CHECK(contains(config, R"("modules_to_save": ["lm_head"])"));
  CHECK(contains(config, "\"base_model_name_or_path\": \"" + dir / "base" + "\""));

  // The same under fsdp at 2 ranks (the adapter loaded into shards), and it trains from there.
  const auto sharded = launch(2, from_adapter(dir / "sharded", adapter, "0",
                                              {"--distributed_backend=fsdp", "--parallelism.dp_shard=2",
                                               "--checkpoint_format=safetensors_dcp"}));
  INFO(sharded.output);
  REQUIRE(sharded.exit_code == 0);
  CHECK(same_tensors(read_tensors(dir / "sharded/checkpoints/last/pretrained_model/adapter_model.safetensors"),
                     trained));
  const auto further = launch(1, from_adapter(dir / "further", adapter, "1e-2", {}));
  INFO(further.output);
  REQUIRE(further.exit_code == 0);
  const auto moved = read_tensors(dir / "further/checkpoints/last/pretrained_model/adapter_model.safetensors");
  REQUIRE(moved.size() == trained.size());
  CHECK_FALSE(same_tensors(moved, trained));
}

TEST_CASE("an adapter whose base is not a folder here is refused, saying how to name the base") {
  TempDir dir("sk-lora-adapter-nobase");
  std::filesystem::create_directories(dir / "adapter");
  std::ofstream(dir / "adapter/adapter_config.json")
      << R"({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "base_model_name_or_path": "meta-llama/Llama-3.2-1B"})";
  std::ofstream(dir / "adapter/config.json") << R"({"model_type": "llama"})";
  const auto r = run_program("shardkit-train", from_adapter(dir / "run", dir / "adapter", "0", {}));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "is a PEFT adapter whose base model 'meta-llama/Llama-3.2-1B' (adapter_config.json's "
                           "base_model_name_or_path) is not a folder here"));
  CHECK(contains(r.output, "--peft.adapter_path=" + dir / "adapter"));
  CHECK_FALSE(std::filesystem::exists(dir / "run/checkpoints"));
}
