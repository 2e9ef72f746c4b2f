// LoRA fine-tuning of a transformers Llama through shardkit-run: PEFT loads the adapter with
// shardkit's logits, the base stays bitwise untouched, --peft.merge gives weights transformers
// loads, and under ddp and fsdp (2 ranks) a resumed run ends with the same adapter, bitwise.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>

#include "../distributed/launch.hpp"
#include "../llama/llama_support.hpp"
#include "lora_runs.hpp"
#include "shardkit/dcp/folder.hpp"
#include "../../../apps/shardkit-train/src/peft.hpp"
#include "shardkit/whole_state.hpp"  // kPeftKeyPrefix

using namespace shardkit;
using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// shardkit's llama from `base` with the adapters of `adapter_file` on `options`' targets.
std::shared_ptr<Policy> llama_with_adapter(const std::string& base, const LoraOptions& options,
                                           const std::string& adapter_file) {
  auto policy = make_llama(false, base);
  apply_lora(*policy, options);
  const auto adapter = read_tensors(adapter_file);
  auto params = policy->named_parameters();
  torch::NoGradGuard no_grad;
  for (const auto& [key, tensor] : adapter) {
    REQUIRE(key.rfind(kPeftKeyPrefix, 0) == 0);
    const auto name = key.substr(std::string(kPeftKeyPrefix).size());
    INFO(name);
    REQUIRE(params.contains(name));
    params[name].copy_(tensor);
  }
  return policy;
}

}  // namespace

TEST_CASE("LoRA single process: PEFT loads the adapter with shardkit's logits; the base is untouched; merge") {
  TempDir dir("sk-lora");
  peer("make " + shell_quote(dir / "base:0:0"));  // untied, one model.safetensors, tokenizer files
  const auto base_bytes = slurp(dir / "base/model.safetensors");
  const auto run = dir / "run";
  const auto r = launch(1, lora_run(run, dir / "base", 6,
                                    {"--peft.target_modules=q_proj,v_proj,down_proj",
                                     "--peft.full_training_modules=lm_head", "--peft.merge=true"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "LoRA: "));
  CHECK(contains(r.output, " trainable parameters of "));

  const auto saved = run + "/checkpoints/last/pretrained_model";
  for (const auto* file : {"adapter_model.safetensors", "adapter_config.json", "config.json", "tokenizer.json"})
    CHECK(fs::exists(saved + "/" + file));
  CHECK_FALSE(fs::exists(saved + "/model.safetensors"));
  const auto config = slurp(saved + "/adapter_config.json");
  CHECK(contains(config, R"("peft_type": "LORA")"));
  CHECK(contains(config, R"("r": 4)"));
  CHECK(contains(config, R"("target_modules": ["q_proj", "v_proj", "down_proj"])"));
  CHECK(contains(config, R"("modules_to_save": ["lm_head"])"));
  CHECK(contains(config, "\"base_model_name_or_path\": \"" + dir / "base" + "\""));

  const auto adapter = read_tensors(saved + "/adapter_model.safetensors");
  CHECK(adapter.size() == 2 * 3 * 2 + 1);  // 2 layers x 3 modules x (A, B), plus lm_head whole
  CHECK(adapter.count("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight") == 1);
  CHECK(adapter.count("base_model.model.lm_head.weight") == 1);
  CHECK(adapter.at("base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight").abs().max().item<double>() > 0);

  // The base model folder is bitwise what it was.
  CHECK(slurp(dir / "base/model.safetensors") == base_bytes);

  // PEFT (PeftModel.from_pretrained on the transformers base) and shardkit agree on the logits.
  lora_peer("peft " + shell_quote(dir / "base") + " " + shell_quote(saved) + " " + shell_quote(dir / "peft.safetensors"));
  peer("logits " + shell_quote(dir / "base") + " " + shell_quote(dir / "base.safetensors"));
  const auto peft = read_tensors(dir / "peft.safetensors");
  LoraOptions options;
  options.r = 4;
  options.lora_alpha = 8;
  options.target_modules = {"q_proj", "v_proj", "down_proj"};
  options.full_training_modules = {"lm_head"};
  auto policy = llama_with_adapter(dir / "base", options, saved + "/adapter_model.safetensors");
  const auto logits = shardkit_logits(*policy, peft);
  const double difference = (logits - peft.at("logits")).abs().max().item<double>();
  WARN("largest |logit difference| shardkit - PEFT: " << difference);
  CHECK(torch::allclose(logits, peft.at("logits"), 1e-5, 1e-5));
  const auto base_logits = read_tensors(dir / "base.safetensors").at("logits");
  CHECK((peft.at("logits") - base_logits).abs().max().item<double>() > 1e-2);  // the adapter changed something

  // --peft.merge=true: transformers loads merged_model/ strictly, with PEFT's logits; every tensor
  // without an adapter is bitwise the base's (the frozen base never moved in training).
  const auto merged_dir = run + "/merged_model";
  REQUIRE(fs::exists(merged_dir + "/model.safetensors"));
  lora_peer("merged " + shell_quote(merged_dir) + " " + shell_quote(dir / "merged.safetensors"));
  const auto merged_logits = read_tensors(dir / "merged.safetensors").at("logits");
  WARN("largest |logit difference| merged - PEFT: " << (merged_logits - peft.at("logits")).abs().max().item<double>());
  CHECK(torch::allclose(merged_logits, peft.at("logits"), 1e-5, 1e-5));
  const auto base = read_tensors(dir / "base/model.safetensors");
  const auto merged = read_tensors(merged_dir + "/model.safetensors");
  REQUIRE(merged.size() == base.size());
  int adapted = 0;
  for (const auto& [name, tensor] : base) {
    INFO(name);
    REQUIRE(merged.count(name) == 1);
    const auto module = name.substr(0, name.size() - std::string(".weight").size());
    const auto a = adapter.find(kPeftKeyPrefix + module + ".lora_A.weight");
    if (name == "lm_head.weight") {
      CHECK(torch::equal(merged.at(name), adapter.at("base_model.model.lm_head.weight")));
    } else if (a == adapter.end()) {
      CHECK(torch::equal(merged.at(name), tensor));
    } else {
      ++adapted;
      const auto& b = adapter.at(kPeftKeyPrefix + module + ".lora_B.weight");
      CHECK(torch::allclose(merged.at(name), tensor + torch::matmul(b, a->second) * 2.0, 1e-6, 1e-6));
    }
  }
  CHECK(adapted == 6);

  // The adapter checkpoint starts a new run that trains the adapter further on its base
  // (adapter_start_test.cpp checks what it loads).
  std::string cmd = shell_quote(bin("shardkit-train"));
  for (const auto& a : {"--output_dir=" + dir / "from-adapter", "--policy.path=" + saved,
                        "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets",
                        std::string("--dataset.type=tokens_fixture"), std::string("--dataset.vocab_size=128"),
                        std::string("--steps=1"), std::string("--num_threads=1")})
    cmd += " " + shell_quote(a);
  const auto from_adapter = run_command(cmd);
  INFO(from_adapter.output);
  CHECK(from_adapter.exit_code == 0);
  CHECK(contains(from_adapter.output, "is a PEFT adapter: training it further on its base " + dir / "base"));
}

TEST_CASE("LoRA under ddp and fsdp at 2 ranks: an adapter-only checkpoint resumes to the same adapter, bitwise") {
  TempDir dir("sk-lora-dist");
  peer("make " + shell_quote(dir / "base:1:0"));  // tied embeddings
  const auto base_bytes = slurp(dir / "base/model.safetensors");
  std::map<std::string, std::vector<double>> curves;
  for (const auto& [name, extra] :
       {std::pair<std::string, std::vector<std::string>>{"ddp", {"--distributed_backend=ddp"}},
        {"fsdp", {"--distributed_backend=fsdp", "--parallelism.dp_shard=2", "--checkpoint_format=safetensors_dcp",
                  "--peft.merge=true"}}}) {
    INFO(name);
    const auto run = dir / name;
    const auto straight = launch(2, lora_run(run, dir / "base", 8, with(extra, {"--save_freq=4"})));
    INFO(straight.output);
    REQUIRE(straight.exit_code == 0);
    CHECK(contains(straight.output, "LoRA: "));
    roll_back_copy(run, run + "-resumed", "000004");
    const auto resumed = launch(2, {"--resume=true", "--output_dir=" + run + "-resumed"});
    INFO(resumed.output);
    REQUIRE(resumed.exit_code == 0);
    CHECK(contains(resumed.output, "resumed from"));
    const auto a = read_tensors(run + "/checkpoints/000008/pretrained_model/adapter_model.safetensors");
    const auto b = read_tensors(run + "-resumed/checkpoints/000008/pretrained_model/adapter_model.safetensors");
    CHECK(a.size() == 2 * 2 * 2);  // q_proj and v_proj (llama's default targets) of 2 layers
    CHECK(same_tensors(a, b));
    const auto full = read_metrics(run), again = read_metrics(run + "-resumed");
    REQUIRE(full.size() == 8);
    REQUIRE(again.size() == 8);
    for (std::size_t i = 4; i < 8; ++i) CHECK(again[i].raw.at("loss") == full[i].raw.at("loss"));  // the same digits
    CHECK(full[7].number("loss") < full[0].number("loss"));
    curves[name] = losses(run);

    if (name == "fsdp") {
      // The DCP shards hold the adapter only; shardkit-convert-dcp makes PEFT's file from them.
      const auto checkpoint = run + "/checkpoints/000008";
      dcp::FolderReader reader(checkpoint + "/" + dcp::kModelFolder);
      std::size_t entries = 0;
      for (const auto& [key, entry] : reader.metadata().state_dict_metadata) {
        INFO(key);
        CHECK((contains(key, ".lora_A.") || contains(key, ".lora_B.")));
        ++entries;
      }
      CHECK(entries == a.size());
      const auto converted = dir / "converted.safetensors";
      const auto c = run_command(shell_quote(bin("shardkit-convert-dcp")) + " --checkpoint_dir=" +
                                 shell_quote(checkpoint) + " --output=" + shell_quote(converted));
      INFO(c.output);
      REQUIRE(c.exit_code == 0);
      CHECK(same_tensors(read_tensors(converted), a));

      // --peft.merge gathers the sharded base and folds the adapter in: W + B A * alpha / r.
      const auto base = read_tensors(dir / "base/model.safetensors");
      const auto merged = read_tensors(run + "/merged_model/model.safetensors");
      REQUIRE(merged.size() == base.size());
      const auto module = std::string("model.layers.1.self_attn.v_proj");
      CHECK(torch::allclose(merged.at(module + ".weight"),
                            base.at(module + ".weight") + torch::matmul(a.at(kPeftKeyPrefix + module + ".lora_B.weight"),
                                                                        a.at(kPeftKeyPrefix + module + ".lora_A.weight")) *
                                                              2.0,
                            1e-6, 1e-6));
      CHECK(torch::equal(merged.at("model.layers.1.self_attn.k_proj.weight"), base.at("model.layers.1.self_attn.k_proj.weight")));
    }
  }
  CHECK(slurp(dir / "base/model.safetensors") == base_bytes);
  // fsdp reduces only the adapters' gradients (the frozen base's pieces are left out of its
  // reduce-scatters) and follows ddp's loss curve.
  double worst = 0;
  for (std::size_t i = 0; i < 8; ++i)
    worst = std::max(worst, std::abs(curves["fsdp"][i] - curves["ddp"][i]) / std::abs(curves["ddp"][i]));
  WARN("fsdp - ddp: largest relative loss difference over 8 steps " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("LoRA with dropout on all-linear resumes exactly in one process (the dropout draws continue)") {
  TempDir dir("sk-lora-dropout");
  peer("make " + shell_quote(dir / "base:0:0"));
  const auto run = dir / "run";
  const auto r = launch(1, lora_run(run, dir / "base", 8,
                                    {"--save_freq=4", "--peft.lora_dropout=0.3", "--peft.target_modules=all-linear"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  roll_back_copy(run, run + "-resumed", "000004");
  const auto resumed = launch(1, {"--resume=true", "--output_dir=" + run + "-resumed"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto a = read_tensors(run + "/checkpoints/000008/pretrained_model/adapter_model.safetensors");
  CHECK(a.size() == 2 * 7 * 2);  // every projection of both layers, lm_head left out
  CHECK(a.count("base_model.model.lm_head.lora_A.weight") == 0);
  CHECK(same_tensors(a, read_tensors(run + "-resumed/checkpoints/000008/pretrained_model/adapter_model.safetensors")));
}

TEST_CASE("LoRA under zero stage 3 (--distributed_backend=deepspeed) at 2 ranks follows ddp's loss curve") {
  TempDir dir("sk-lora-zero3");
  peer("make " + shell_quote(dir / "base:0:0"));
  std::map<std::string, std::vector<double>> curves;
  std::map<std::string, std::map<std::string, torch::Tensor>> adapters;
  for (const auto* backend : {"ddp", "deepspeed"}) {
    INFO(backend);
    const auto run = dir / backend;
    const auto r = launch(2, lora_run(run, dir / "base", 6,
                                      {"--distributed_backend=" + std::string(backend), "--save_freq=6"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    curves[backend] = losses(run);
    REQUIRE(curves[backend].size() == 6);
    adapters[backend] = read_tensors(run + "/checkpoints/last/pretrained_model/adapter_model.safetensors");
  }
  double worst = 0;
  for (std::size_t i = 0; i < 6; ++i)
    worst = std::max(worst, std::abs(curves["deepspeed"][i] - curves["ddp"][i]) / std::abs(curves["ddp"][i]));
  WARN("zero3 - ddp: largest relative loss difference over 6 steps " << worst);
  CHECK(worst < 1e-5);  // fp32; the reductions are ordered differently
  REQUIRE(adapters["deepspeed"].size() == 8);
  for (const auto& [name, tensor] : adapters["ddp"]) {
    INFO(name);
    CHECK(torch::allclose(adapters["deepspeed"].at(name), tensor, 1e-4, 1e-6));
  }
  CHECK(adapters["deepspeed"].at("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight").abs().max().item<double>() > 0);
}

TEST_CASE("LoRA options are refused clearly: another method, a target that matches nothing, no --policy.path") {
  TempDir dir("sk-lora-bad");
  peer("make " + shell_quote(dir / "base:0:0"));
  const auto train = [&](const std::string& out, std::vector<std::string> extra) {
    std::string cmd = shell_quote(bin("shardkit-train"));
    for (const auto& a : lora_run(dir / out, dir / "base", 2, std::move(extra))) cmd += " " + shell_quote(a);
    return run_command(cmd);
  };
  const auto ia3 = train("ia3", {"--peft.method_type=IA3"});
  INFO(ia3.output);
  CHECK(ia3.exit_code != 0);
  CHECK(contains(ia3.output, "--peft.method_type=IA3: shardkit implements only LoRA"));

  const auto unmatched = train("unmatched", {"--peft.target_modules=q_proj,qkv"});
  INFO(unmatched.output);
  CHECK(unmatched.exit_code != 0);
  CHECK(contains(unmatched.output, "'qkv' matches no module of the policy"));
  CHECK(contains(unmatched.output, "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, lm_head"));

  auto args = lora_run(dir / "scratch", "", 2, {});
  args.erase(std::remove(args.begin(), args.end(), std::string("--policy.path=")), args.end());
  args.push_back("--policy.type=llama");
  std::string cmd = shell_quote(bin("shardkit-train"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const auto scratch = run_command(cmd);
  INFO(scratch.output);
  CHECK(scratch.exit_code != 0);
  CHECK(contains(scratch.output, "without --policy.path: training from scratch using PEFT"));
}
