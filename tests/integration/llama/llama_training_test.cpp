// llama trains from a transformers folder through the launcher (2 processes, ddp and fsdp) on
// variable-length token data, and transformers loads the checkpoint strictly with shardkit's logits.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>

#include "../distributed/launch.hpp"
#include "llama_support.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

std::vector<std::string> llama_run(const std::string& out, const std::string& folder, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--output_dir=" + out, "--policy.path=" + folder,
      "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/datasets", "--dataset.type=tokens_fixture",
      "--dataset.vocab_size=128", "--dataset.max_len=16", "--steps=20", "--save_freq=20", "--batch_size=4",
      "--optimizer.lr=3e-3", "--log_freq=1", "--seed=3", "--num_threads=1", "--distributed.timeout_s=120"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("llama trains 20 steps from a transformers folder under ddp and fsdp; transformers loads the result") {
  TempDir dir("sk-llama-train");
  peer("make " + shell_quote(dir / "start:1:1"));  // tied, sharded, with tokenizer files
  std::vector<std::pair<std::string, std::string>> trained_runs;
  for (const auto& [name, extra] :
       {std::pair<std::string, std::vector<std::string>>{"ddp", {"--distributed_backend=ddp"}},
        {"fsdp", {"--distributed_backend=fsdp", "--parallelism.dp_shard=2"}}}) {
    INFO(name);
    const auto run = dir / name;
    const auto r = launch(2, llama_run(run, dir / "start", extra));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "policy llama ("));
    const auto l = losses(run);
    REQUIRE(l.size() == 20);
    const double first = (l[0] + l[1] + l[2]) / 3, last = (l[17] + l[18] + l[19]) / 3;
    WARN(name << ": mean loss of the first 3 steps " << first << ", of the last 3 " << last);
    CHECK(last < 0.95 * first);

    const auto saved = run + "/checkpoints/last/pretrained_model";
    for (const auto* file : {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"})
      CHECK(std::filesystem::exists(saved + "/" + file));
    const auto config = slurp(saved + "/config.json");
    CHECK(contains(config, R"("architectures": ["LlamaForCausalLM"])"));
    CHECK(contains(config, R"("torch_dtype": "float32")"));
    CHECK(contains(config, R"("rope_type": "llama3")"));
    CHECK(read_tensors(saved + "/model.safetensors").count("lm_head.weight") == 0);  // tied, as transformers saves

    trained_runs.emplace_back(name, saved);
  }
  // transformers loads each checkpoint strictly (llama_peer.py fails otherwise) and computes
  // shardkit's logits for the trained weights, which differ from the starting ones.
  std::string command = "logits " + shell_quote(dir / "start") + " " + shell_quote(dir / "start.safetensors");
  for (const auto& [name, saved] : trained_runs)
    command += " " + shell_quote(saved) + " " + shell_quote(dir / name + ".safetensors");
  peer(command);
  const auto start = read_tensors(dir / "start.safetensors");
  for (const auto& [name, saved] : trained_runs) {
    INFO(name);
    const auto trained = read_tensors(dir / name + ".safetensors");
    auto policy = make_llama(true, saved);
    const auto logits = shardkit_logits(*policy, trained);
    WARN(name << ": largest |logit difference| to transformers after training "
              << (logits - trained.at("logits")).abs().max().item<double>());
    CHECK(torch::allclose(logits, trained.at("logits"), 1e-5, 1e-5));
    CHECK((trained.at("logits") - start.at("logits")).abs().max().item<double>() > 1e-2);
  }
}
