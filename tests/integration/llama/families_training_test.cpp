// qwen2, qwen3 and mistral fine-tune from transformers folders through the launcher, fully and
// with LoRA, in one process and under ddp, fsdp and zero stage 3 at 2 ranks (each family trains
// both ways, each backend sees both ways); transformers loads each full checkpoint strictly with
// shardkit's logits, and PEFT loads each adapter with the logits of its merged model.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>

#include "../distributed/launch.hpp"
#include "llama_support.hpp"

using namespace shardkit;
using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

struct Run {
  int nproc;
  std::vector<std::string> flags;
  bool lora;
  std::string name;
};

/// Each family's four runs: every backend once, full and LoRA twice each (rotated per family).
std::vector<Run> runs_for(bool lora_first) {
  const std::vector<std::pair<int, std::vector<std::string>>> backends = {
      {1, {}},
      {2, {"--distributed_backend=ddp"}},
      {2, {"--distributed_backend=fsdp", "--parallelism.dp_shard=2"}},
      {2, {"--distributed_backend=deepspeed"}}};
  const char* names[] = {"single", "ddp", "fsdp", "zero3"};
  std::vector<Run> runs;
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const bool lora = (i % 2 == 0) == lora_first;
    runs.push_back({backends[i].first, backends[i].second, lora, std::string(names[i]) + (lora ? "-lora" : "-full")});
  }
  return runs;
}

/// The run's flags: variable-length token data (a learnable rule), 16 steps, a checkpoint at the last.
std::vector<std::string> family_run(const std::string& out, const std::string& base, const Run& run) {
  std::vector<std::string> flags = {
      "--output_dir=" + out, "--policy.path=" + base,
      "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
      "--dataset.vocab_size=128", "--dataset.max_len=16", "--steps=16", "--save_freq=16", "--batch_size=4",
      "--log_freq=1", "--seed=3", "--num_threads=1", "--distributed.timeout_s=120"};
  if (run.lora) flags = with(flags, {"--optimizer.lr=3e-2", "--peft.r=4", "--peft.lora_alpha=8", "--peft.merge=true"});
  else flags.push_back("--optimizer.lr=1e-2");
  return with(flags, run.flags);
}

/// shardkit's logits for the folder `saved` (a family's checkpoint) equal transformers' in `reference`.
void check_logits(const std::string& type, const std::string& saved, const std::string& reference_file) {
  const auto reference = read_tensors(reference_file);
  auto policy = make_family(type, saved);
  const auto logits = shardkit_logits(*policy, reference);
  WARN(type << " " << saved << ": largest |logit difference| to transformers "
            << (logits - reference.at("logits")).abs().max().item<double>());
  CHECK(torch::allclose(logits, reference.at("logits"), 1e-5, 1e-5));
}

}  // namespace

TEST_CASE("qwen2, qwen3 and mistral fine-tune full and LoRA in 1 process, ddp, fsdp and zero3; transformers and PEFT load them") {
  TempDir dir("sk-families-train");
  const std::vector<std::tuple<std::string, std::string, std::string>> families = {
      {"qwen2", "qwen2:1:1:float32:qwen2", "Qwen2ForCausalLM"},
      {"qwen3", "qwen3:0:0:float32:qwen3", "Qwen3ForCausalLM"},
      {"mistral", "mistral:0:0:float32:mistral", "MistralForCausalLM"}};
  std::string make = "make";
  for (const auto& [type, spec, architecture] : families) make += " " + shell_quote(dir / spec);
  peer(make);
  bool lora_first = false;
  for (const auto& [type, spec, architecture] : families) {
    const auto base = dir / type;
    peer("logits " + shell_quote(base) + " " + shell_quote(base + ".safetensors"));
    const auto start = read_tensors(base + ".safetensors").at("logits");
    for (const auto& run : runs_for(lora_first)) {
      INFO(type << " " << run.name);
      const auto out = dir / (type + "-" + run.name);
      const auto r = launch(run.nproc, family_run(out, base, run));
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
      CHECK(contains(r.output, "policy " + type + " ("));
      const auto l = losses(out);
      REQUIRE(l.size() == 16);
      // (Each step's batch differs: the means of the first and the last four steps.)
      const double first = (l[0] + l[1] + l[2] + l[3]) / 4, last = (l[12] + l[13] + l[14] + l[15]) / 4;
      WARN(type << " " << run.name << ": mean loss of the first 4 steps " << first << ", of the last 4 " << last);
      CHECK(last < first);

      const auto saved = out + "/checkpoints/last/pretrained_model";
      CHECK(contains(slurp(saved + "/config.json"), "\"architectures\": [\"" + architecture + "\"]"));
      const auto result = out + ".safetensors";
      if (run.lora) {
        // PEFT puts the adapter on the transformers base; transformers loads merged_model/ strictly;
        // both give the same logits, and shardkit gives them from merged_model/ too.
        REQUIRE(fs::exists(saved + "/adapter_model.safetensors"));
        lora_peer("peft " + shell_quote(base) + " " + shell_quote(saved) + " " + shell_quote(out + "-peft.safetensors"));
        lora_peer("merged " + shell_quote(out + "/merged_model") + " " + shell_quote(result));
        const auto peft = read_tensors(out + "-peft.safetensors").at("logits");
        const auto merged = read_tensors(result).at("logits");
        // (W x + s B A x against (W + s B A) x in fp32: rounding grows with the adapter.)
        WARN(type << " " << run.name << ": largest |logit difference| PEFT - merged "
                  << (peft - merged).abs().max().item<double>());
        CHECK(torch::allclose(peft, merged, 1e-4, 1e-4));
        CHECK((peft - start).abs().max().item<double>() > 1e-2);
        check_logits(type, out + "/merged_model", result);
      } else {
        // transformers loads the checkpoint strictly (llama_peer.py fails otherwise), with shardkit's logits.
        peer("logits " + shell_quote(saved) + " " + shell_quote(result));
        CHECK((read_tensors(result).at("logits") - start).abs().max().item<double>() > 1e-2);
        check_logits(type, saved, result);
      }
    }
    lora_first = !lora_first;
  }
}
