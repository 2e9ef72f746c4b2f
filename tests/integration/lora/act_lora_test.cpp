// LoRA on ACT (issue 26, item 3): with its default targets ACT trains and its loss falls, the
// adapter has PEFT's names for LeRobot's ACT and PEFT itself loads and merges it as shardkit does;
// targets naming ACT's modules and all-linear work; targets that match nothing (or name q_proj,
// which torch's MultiheadAttention does not have) stop the start naming them; and the LeRobot
// guide's PEFT + FSDP example runs on ACT at 2 processes, on ddp's bf16 curve.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "../act/act_runs.hpp"
#include "../distributed/launch.hpp"
#include "../llama/llama_support.hpp"
#include "shardkit/whole_state.hpp"  // kPeftKeyPrefix

using namespace shardkit;
using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

const std::string kPrefix = kPeftKeyPrefix;  // "base_model.model."

/// A base ACT (act_flags' reduced size, kl_weight 1) trained 4 steps in one process; returns its
/// pretrained_model folder, the --policy.path of the LoRA runs.
std::string train_base(const TempDir& dir) {
  const auto r = run_program("shardkit-train", with(act_flags(dir / "base"), {"--steps=4", "--batch_size=4",
                                                                               "--policy.kl_weight=1"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return dir / "base/checkpoints/last/pretrained_model";
}

/// A LoRA run from `base` into `out`: act_flags' dataset and run flags with the policy taken from
/// the checkpoint (its --policy.* options are the saved ones), lr 1e-3, then `extra`.
std::vector<std::string> lora_flags(const std::string& out, const std::string& base, const std::vector<std::string>& extra) {
  std::vector<std::string> args;
  for (const auto& a : act_flags(out))
    if (a.rfind("--policy.", 0) != 0 && a.rfind("--optimizer.lr=", 0) != 0) args.push_back(a);
  return with(with(args, {"--policy.path=" + base, "--optimizer.lr=1e-3"}), extra);
}

std::set<std::string> keys_of(const std::map<std::string, torch::Tensor>& tensors) {
  std::set<std::string> out;
  for (const auto& [key, _] : tensors) out.insert(key);
  return out;
}

/// The adapter keys of `module` (a Linear: lora_A/lora_B; an attention: also its out_proj's).
void add_adapter_keys(std::set<std::string>& keys, const std::string& module, bool attention) {
  for (const std::string part : {std::string(), std::string(".base_layer.out_proj")}) {
    if (!part.empty() && !attention) continue;
    keys.insert(kPrefix + module + part + ".lora_A.weight");
    keys.insert(kPrefix + module + part + ".lora_B.weight");
  }
}

/// The default targets of act_flags' ACT (2 encoder layers, 1 decoder layer, a state, no
/// environment state): the encoder and decoder attention, the state projection, the action head.
std::set<std::string> default_adapter_keys() {
  std::set<std::string> keys;
  for (const auto* attention : {"model.encoder.layers.0.self_attn", "model.encoder.layers.1.self_attn",
                                "model.decoder.layers.0.self_attn", "model.decoder.layers.0.multihead_attn"})
    add_adapter_keys(keys, attention, true);
  add_adapter_keys(keys, "model.encoder_robot_state_input_proj", false);
  add_adapter_keys(keys, "model.action_head", false);
  return keys;
}

/// act_lora_peer.py with `args`; fails the test (with its output) unless it succeeds.
std::string act_lora_peer(const std::string& args) {
  const auto r = run_command(python() + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/lora/act_lora_peer.py") +
                             " " + args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

/// shardkit-train in one process with `args`, expected to stop at start-up; returns its output.
std::string refused(const std::vector<std::string>& args) {
  const auto r = run_program("shardkit-train", args);
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK_FALSE(contains(r.output, "does not require grad"));
  CHECK_FALSE(contains(r.output, "LoRA: "));
  return r.output;
}

}  // namespace

TEST_CASE("act + LoRA with the default targets: the adapters lower the loss; PEFT's names; PEFT merges the adapter as shardkit") {
  TempDir dir("sk-act-lora");
  const auto base = train_base(dir);
  const auto base_bytes = slurp(base + "/model.safetensors");
  REQUIRE_FALSE(base_bytes.empty());
  const auto run = dir / "lora";
  const auto r = run_program("shardkit-train", lora_flags(run, base, {"--peft.r=8", "--peft.lora_alpha=16", "--steps=24",
                                                                      "--batch_size=4", "--peft.merge=true"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "LoRA: "));
  CHECK_FALSE(contains(r.output, "LoRA: 0 trainable"));

  // The frozen VAE keeps the KL term out of reach, so the L1 term is what the adapters lower.
  // Compared step by step with the same run at lr 0 (the same batches and dropout draws, the
  // base's losses), so that batch-to-batch noise cancels.
  const auto frozen_run = dir / "lora-lr0";
  auto frozen_flags = lora_flags(frozen_run, base, {"--peft.r=8", "--peft.lora_alpha=16", "--steps=24",
                                                    "--batch_size=4", "--save_checkpoint=false"});
  frozen_flags.push_back("--optimizer.lr=0");
  const auto frozen_r = run_program("shardkit-train", frozen_flags);
  INFO(frozen_r.output);
  REQUIRE(frozen_r.exit_code == 0);
  const auto lines = read_metrics(run);
  const auto frozen = read_metrics(frozen_run);
  REQUIRE(lines.size() == 24);
  REQUIRE(frozen.size() == 24);
  CHECK(lines[0].number("l1_loss") == frozen[0].number("l1_loss"));  // step 1 runs the untouched base
  double trained = 0, untrained = 0;
  for (std::size_t i = 12; i < 24; ++i) {
    trained += lines[i].number("l1_loss") / 12;
    untrained += frozen[i].number("l1_loss") / 12;
  }
  WARN("l1_loss over steps 13-24: " << trained << " with the adapters trained, " << untrained << " at lr 0");
  CHECK(std::isfinite(trained));
  CHECK(trained < untrained);

  // The checkpoint holds the adapter alone, under PEFT's names for LeRobot's ACT.
  const auto saved = run + "/checkpoints/last/pretrained_model";
  CHECK(fs::exists(saved + "/adapter_config.json"));
  CHECK_FALSE(fs::exists(saved + "/model.safetensors"));
  const auto adapter = read_tensors(saved + "/adapter_model.safetensors");
  CHECK(keys_of(adapter) == default_adapter_keys());
  const auto attention = kPrefix + "model.encoder.layers.0.self_attn";
  CHECK(adapter.at(attention + ".lora_A.weight").sizes().vec() == std::vector<std::int64_t>{8, 32});
  CHECK(adapter.at(attention + ".lora_B.weight").sizes().vec() == std::vector<std::int64_t>{96, 8});  // q, k and v packed
  CHECK(adapter.at(attention + ".base_layer.out_proj.lora_A.weight").sizes().vec() == std::vector<std::int64_t>{8, 32});
  CHECK(adapter.at(attention + ".base_layer.out_proj.lora_B.weight").sizes().vec() == std::vector<std::int64_t>{32, 8});
  for (const auto* trained : {"model.decoder.layers.0.multihead_attn.lora_B.weight",
                              "model.decoder.layers.0.multihead_attn.base_layer.out_proj.lora_B.weight",
                              "model.action_head.lora_B.weight"}) {
    INFO(trained);
    CHECK(adapter.at(kPrefix + trained).abs().max().item<double>() > 0);
  }
  const auto config = slurp(saved + "/adapter_config.json");
  CHECK(contains(config, R"("target_modules": ["model.encoder.layers.0.self_attn", "model.encoder.layers.1.self_attn", )"
                         R"("model.decoder.layers.0.self_attn", "model.decoder.layers.0.multihead_attn", )"
                         R"("model.encoder_robot_state_input_proj", "model.action_head"])"));
  CHECK(contains(config, R"("r": 8)"));
  // LeRobot's PeftModel.from_pretrained(ACTPolicy, ...) needs no task type: CAUSAL_LM would wrap
  // the policy in PeftModelForCausalLM, which asks it for generation methods.
  CHECK(contains(config, R"("task_type": null)"));
  CHECK(slurp(base + "/model.safetensors") == base_bytes);  // the base is untouched

  // PEFT loads every adapter tensor onto torch modules of ACT's names (nn.MultiheadAttention for
  // the attention) and merges them as --peft.merge did.
  const auto peer_said = act_lora_peer(shell_quote(base) + " " + shell_quote(saved) + " " + shell_quote(dir / "peft.safetensors"));
  INFO(peer_said);
  const auto peft = read_tensors(dir / "peft.safetensors");
  const auto before = read_tensors(base + "/model.safetensors");
  const auto merged = read_tensors(run + "/merged_model/model.safetensors");
  CHECK(peft.size() == 4 * 4 + 2 * 2);  // 4 attention modules (in_proj, out_proj: weight, bias), 2 linears
  const double scaling = 16.0 / 8.0;
  int changed = 0;
  for (const auto& [key, tensor] : peft) {
    INFO(key);
    REQUIRE(merged.count(key) == 1);
    REQUIRE(before.count(key) == 1);
    if (!torch::equal(merged.at(key), before.at(key))) ++changed;
    const std::string out_suffix = ".out_proj.weight";
    if (key.size() > out_suffix.size() && key.compare(key.size() - out_suffix.size(), out_suffix.size(), out_suffix) == 0) {
      // An attention's out_proj: W + B A * scaling. PEFT up to 0.21.2 adds B A * scaling twice
      // here (huggingface/peft#3774, in merge_and_unload and in every forward); shardkit adds it once.
      const auto module = kPrefix + key.substr(0, key.size() - out_suffix.size()) + ".base_layer.out_proj";
      const auto delta = torch::matmul(adapter.at(module + ".lora_B.weight"), adapter.at(module + ".lora_A.weight")) * scaling;
      CHECK(torch::allclose(merged.at(key), before.at(key) + delta, 1e-5, 1e-6));
      if (!torch::allclose(tensor, before.at(key) + delta, 1e-5, 1e-6)) {
        CHECK(torch::allclose(tensor, before.at(key) + delta * 2, 1e-5, 1e-6));
        WARN("PEFT merged " << key << " as W + 2 B A s (huggingface/peft#3774); shardkit as W + B A s");
      }
    } else {
      CHECK(torch::allclose(merged.at(key), tensor, 1e-5, 1e-6));
    }
  }
  CHECK(changed == 4 * 2 + 2);  // every adapted weight moved, no bias did
}

TEST_CASE("act + LoRA: --peft.target_modules naming ACT's modules, and all-linear") {
  TempDir dir("sk-act-lora-named");
  const auto base = train_base(dir);
  struct Case {
    std::string targets, config_targets;
    std::set<std::string> keys;
  };
  std::vector<Case> cases;
  {
    Case named{"linear1,linear2,multihead_attn", R"("target_modules": ["linear1", "linear2", "multihead_attn"])", {}};
    for (const auto* layer : {"model.vae_encoder.layers.0", "model.encoder.layers.0", "model.encoder.layers.1",
                              "model.decoder.layers.0"})
      for (const auto* linear : {".linear1", ".linear2"}) add_adapter_keys(named.keys, layer + std::string(linear), false);
    add_adapter_keys(named.keys, "model.decoder.layers.0.multihead_attn", true);
    cases.push_back(named);
  }
  {
    // PEFT's all-linear: every Linear (ACT has no lm_head, so the action head too), no attention.
    Case all{"all-linear", R"("target_modules": "all-linear")", {}};
    for (const auto* layer : {"model.vae_encoder.layers.0", "model.encoder.layers.0", "model.encoder.layers.1",
                              "model.decoder.layers.0"})
      for (const auto* linear : {".linear1", ".linear2"}) add_adapter_keys(all.keys, layer + std::string(linear), false);
    for (const auto* linear : {"model.vae_encoder_robot_state_input_proj", "model.vae_encoder_action_input_proj",
                               "model.vae_encoder_latent_output_proj", "model.encoder_robot_state_input_proj",
                               "model.encoder_latent_input_proj", "model.action_head"})
      add_adapter_keys(all.keys, linear, false);
    cases.push_back(all);
  }
  int index = 0;
  for (const auto& c : cases) {
    INFO("--peft.target_modules=" << c.targets);
    const auto run = dir / ("run" + std::to_string(index++));
    const auto r = run_program("shardkit-train", lora_flags(run, base, {"--peft.target_modules=" + c.targets, "--peft.r=4",
                                                                        "--steps=3", "--batch_size=2"}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "LoRA: "));
    CHECK_FALSE(contains(r.output, "LoRA: 0 trainable"));
    for (const auto& line : read_metrics(run)) CHECK(std::isfinite(line.number("loss")));
    const auto saved = run + "/checkpoints/last/pretrained_model";
    const auto adapter = read_tensors(saved + "/adapter_model.safetensors");
    CHECK(keys_of(adapter) == c.keys);
    CHECK(contains(slurp(saved + "/adapter_config.json"), c.config_targets));
  }
  CHECK(cases[0].keys.size() == 4 * 2 * 2 + 4);
  CHECK(cases[1].keys.size() == (4 * 2 + 6) * 2);
}

TEST_CASE("act + LoRA: targets that match nothing stop the start, naming them and what can take adapters") {
  TempDir dir("sk-act-lora-bad");
  const auto base = train_base(dir);
  const auto flags = [&](const std::string& out, const std::string& targets) {
    return lora_flags(dir / out, base, {"--peft.target_modules=" + targets, "--steps=2", "--batch_size=2"});
  };
  {
    INFO("the issue's command: Llama's names, which torch's MultiheadAttention does not have");
    const auto out = refused(flags("qv", "q_proj,v_proj"));
    CHECK(contains(out, "--peft.target_modules=q_proj,v_proj: 'q_proj' matches no module of the policy, 'v_proj' "
                        "matches no module of the policy"));
    CHECK(contains(out, "the modules that can take adapters are self_attn, linear1, linear2, "));
    CHECK(contains(out, "multihead_attn"));
    CHECK(contains(out, "q, k and v are packed in one in_proj_weight"));
    CHECK(contains(out, "name the attention module (e.g. 'self_attn')"));
  }
  {
    INFO("out_proj: an adapter PEFT would never use");
    const auto out = refused(flags("out_proj", "out_proj"));
    CHECK(contains(out, "'out_proj' names modules that cannot carry LoRA adapters"));
    CHECK(contains(out, "q, k and v are packed in one in_proj_weight"));
  }
  {
    INFO("a target set that matches nothing");
    const auto out = refused(flags("nothing", "qkv,attention"));
    CHECK(contains(out, "--peft.target_modules=qkv,attention: 'qkv' matches no module of the policy, 'attention' "
                        "matches no module of the policy"));
  }
}

TEST_CASE("act + LoRA: the LeRobot guide's PEFT + FSDP example at 2 processes, bf16, on ddp's bf16 curve") {
  TempDir dir("sk-act-lora-fsdp");
  const auto base = train_base(dir);
  const std::vector<std::string> common{"--steps=4", "--batch_size=2", "--peft.method_type=LORA", "--peft.r=16",
                                        "--accelerator.mixed_precision=bf16"};
  const auto ddp = launch(2, lora_flags(dir / "ddp", base, with(common, {"--distributed_backend=ddp"})));
  INFO(ddp.output);
  REQUIRE(ddp.exit_code == 0);
  // The guide's flags: --parallelism.dp_shard picks fsdp.
  const auto fsdp = launch(2, lora_flags(dir / "fsdp", base, with(common, {"--parallelism.dp_shard=2"})));
  INFO(fsdp.output);
  REQUIRE(fsdp.exit_code == 0);
  CHECK(contains(fsdp.output, "backend fsdp,"));
  CHECK(contains(fsdp.output, "mixed precision bf16 (params "));
  CHECK(contains(fsdp.output, "LoRA: "));

  // The same tolerance as ACT's full bf16 training against ddp (act_precision_test.cpp): ddp
  // casts fp32 weights per operation under autocast, fsdp computes with bf16 copies, so the
  // curves differ by where bf16 rounds. The first step is the base's (B = 0) on both.
  const auto want = losses(dir / "ddp"), got = losses(dir / "fsdp");
  REQUIRE(want.size() == 4);
  REQUIRE(got.size() == 4);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(std::isfinite(got[i]));
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::max(1e-12, std::abs(want[i])));
  }
  WARN("fsdp - ddp (bf16, LoRA): largest relative loss difference over 4 steps " << worst);
  CHECK(worst <= 5e-2);

  const auto saved = dir / "fsdp/checkpoints/last/pretrained_model";
  CHECK_FALSE(fs::exists(saved + "/model.safetensors"));
  const auto adapter = read_tensors(saved + "/adapter_model.safetensors");
  CHECK(keys_of(adapter) == default_adapter_keys());
  CHECK(adapter.at(kPrefix + "model.encoder.layers.0.self_attn.lora_A.weight").sizes().vec() == std::vector<std::int64_t>{16, 32});
  CHECK(adapter.at(kPrefix + "model.action_head.lora_B.weight").abs().max().item<double>() > 0);
}
