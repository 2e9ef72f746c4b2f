// Bad input to shardkit-train: each gives a clear error and loses nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "train_fixture.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

TEST_CASE("an unknown flag is refused with a suggestion", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--optimzer.lr=1e-3"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "optimizer.lr"));
  CHECK_FALSE(fs::exists(tmp / "run"));
}

TEST_CASE("an unknown plugin lists the available ones", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--policy.type=nope"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "nope"));
  CHECK(contains(r.output, "mlp"));
}

TEST_CASE("a wrong type names the flag and what is allowed", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--steps=many"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--steps"));
  CHECK(contains(r.output, "many"));
}

TEST_CASE("malformed config files give line and column", "[train][errors]") {
  TempDir tmp;
  const auto path = tmp / "bad.toml";
  std::ofstream(path) << "steps = 10\nbatch_size = = 3\n";
  const auto r = run_program("shardkit-train", {"--config_path=" + path});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "bad.toml:2"));
}

TEST_CASE("--policy.device=cuda without a usable GPU names what is missing", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--policy.device=cuda"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--policy.device=cuda: "));
  // A CUDA LibTorch on a machine without GPU, or a CPU-only LibTorch: each says which.
  CHECK((contains(r.output, "no CUDA device is visible") || contains(r.output, "CPU-only build")));
  CHECK(contains(r.output, "--policy.device=cpu"));
  CHECK_FALSE(fs::exists(tmp / "run"));
}

TEST_CASE("a malformed --policy.device is refused with the accepted forms", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--policy.device=gpu0"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--policy.device=gpu0: expected cpu, cuda (cuda:LOCAL_RANK per process) or cuda:N"));
}

const std::string kFixtures = SHARDKIT_FIXTURE_DIR;

TEST_CASE("options of a plugin that is not selected are refused", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {
      "--plugins=" + kFixtures + "/libshardkit-policy-good.so", "--policy.greeting=hi"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--policy.greeting"));
  CHECK(contains(r.output, "policy 'good'"));
  CHECK(contains(r.output, "policy.type=mlp"));
}

TEST_CASE("a plugin built against another LibTorch or ABI is refused by name", "[train][errors]") {
  for (const auto* fixture : {"bad_torch", "bad_abi", "bad_cxx_abi"}) {
    TempDir tmp;
    const auto file = kFixtures + "/libshardkit-policy-" + fixture + ".so";
    const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--plugins=" + file}));
    INFO(r.output);
    CHECK(r.exit_code == 2);  // a plugin named on the command line: a configuration error
    CHECK(contains(r.output, file));
    CHECK_FALSE(fs::exists(tmp / "run"));
  }
}

TEST_CASE("configuration errors exit 2: a missing plugin file, a resume without a checkpoint",
          "[train][errors]") {
  TempDir tmp;
  const auto plugin = run_program("shardkit-train", small_run(tmp / "run", {"--plugins=" + (tmp / "nope.so")}));
  INFO(plugin.output);
  CHECK(plugin.exit_code == 2);
  CHECK(contains(plugin.output, "configuration error: plugin file " + (tmp / "nope.so")));
  const auto resume = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (tmp / "empty")});
  INFO(resume.output);
  CHECK(resume.exit_code == 2);
  CHECK(contains(resume.output, "configuration error: checkpoint folder"));
  CHECK_FALSE(fs::exists(tmp / "run"));
}

TEST_CASE("a plugin of the right kind but the wrong interface is refused", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {
      "--plugins=" + kFixtures + "/libshardkit-policy-good.so", "--policy.type=good"}));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "good"));
}

TEST_CASE("save_freq must be a multiple of the accumulation steps", "[train][errors]") {
  TempDir tmp;
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {
      "--steps=8", "--save_freq=3", "--accelerator.gradient_accumulation.steps=2"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--save_freq=3"));
}

TEST_CASE("an output folder that holds a run is not overwritten", "[train][errors]") {
  TempDir tmp;
  const auto out = tmp / "run";
  train_ok(small_run(out, {"--steps=10", "--log_freq=5"}));
  const auto before = slurp(out + "/metrics.jsonl");
  const auto r = run_program("shardkit-train", small_run(out, {"--steps=10"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--resume=true"));
  CHECK(slurp(out + "/metrics.jsonl") == before);
}

TEST_CASE("resuming from a folder that is not a complete checkpoint is refused", "[train][errors]") {
  TempDir tmp;
  const auto out = tmp / "run";
  train_ok(small_run(out, {"--steps=20", "--save_freq=10", "--log_freq=10"}));
  const auto ck = out + "/checkpoints/000010";
  fs::remove(ck + "/training_state/training_step.json");
  const auto r = run_program("shardkit-train", {"--resume=true", "--steps=30",
      "--config_path=" + ck + "/pretrained_model/train_config.json"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "not a complete shardkit checkpoint"));
  CHECK(contains(r.output, "training_step.json"));
}

TEST_CASE("a truncated or corrupt model file gives a clear error", "[train][errors]") {
  TempDir tmp;
  const auto out = tmp / "run";
  train_ok(small_run(out, {"--steps=20", "--save_freq=10", "--log_freq=10"}));
  const auto model = out + "/checkpoints/000010/pretrained_model/model.safetensors";
  const auto size = fs::file_size(model);
  SECTION("truncated") { fs::resize_file(model, size / 2); }
  SECTION("garbage header") {
    std::fstream f(model, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f << "#### not json ####";
  }
  const auto r = run_program("shardkit-train", {"--resume=true", "--steps=30",
      "--config_path=" + out + "/checkpoints/000010/pretrained_model/train_config.json"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "model.safetensors"));
  CHECK_FALSE(contains(r.output, "Segmentation"));
}

TEST_CASE("the single backend refuses to run under a multi-process launcher", "[train][errors]") {
  TempDir tmp;
  std::string cmd = "WORLD_SIZE=2 RANK=0 '" + std::string(SHARDKIT_BIN_DIR) +
                    "/shardkit-train' --distributed_backend=single --output_dir=" + (tmp / "run");
  const auto r = run_command(cmd);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "WORLD_SIZE=2"));
}

TEST_CASE("--help lists options and plugins; a selected plugin adds its options", "[train][help]") {
  const auto plain = run_program("shardkit-train", {"--help"});
  CHECK(plain.exit_code == 0);
  CHECK(contains(plain.output, "--steps"));
  CHECK(contains(plain.output, "policy 'mlp'"));
  CHECK_FALSE(contains(plain.output, "hidden_dim"));
  const auto with_policy = run_program("shardkit-train", {"--policy.type=mlp", "--help"});
  CHECK(with_policy.exit_code == 0);
  CHECK(contains(with_policy.output, "hidden_dim"));
}

TEST_CASE("an adapter_config.json whose r is not an integer is a configuration error naming it", "[train][errors]") {
  TempDir tmp;
  fs::create_directories(tmp / "base");
  std::ofstream(tmp / "base/config.json") << R"({"model_type": "llama", "vocab_size": 64, "hidden_size": 16,
      "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2})";
  fs::create_directories(tmp / "adapter");
  std::ofstream(tmp / "adapter/adapter_config.json")
      << R"({"peft_type": "LORA", "r": 1.5, "lora_alpha": 8, "base_model_name_or_path": ")" << (tmp / "base")
      << R"("})";
  std::ofstream(tmp / "adapter/config.json") << R"({"model_type": "llama"})";
  const auto r = run_program("shardkit-train", small_run(tmp / "run", {"--policy.path=" + (tmp / "adapter")}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "peft.r"));
  CHECK(contains(r.output, "adapter_config.json"));
  CHECK_FALSE(contains(r.output, "boost"));
}

namespace {
/// shardkit-train with --policy.path at a model folder holding only `config` as its config.json.
ProcessResult train_from_config(const TempDir& tmp, const std::string& config, std::vector<std::string> flags) {
  fs::create_directories(tmp / "base");
  std::ofstream(tmp / "base/config.json") << config;
  flags.insert(flags.begin(), {"--policy.path=" + (tmp / "base"), "--output_dir=" + (tmp / "run"), "--num_threads=1"});
  return run_program("shardkit-train", flags);
}
}  // namespace

TEST_CASE("a config.json whose llama3 rope scaling has an original_max_position_embeddings no context has is refused "
          "naming it", "[train][errors]") {
  // Found while writing the hf_config fuzz target and confirmed by it (its corpus keeps the input): UBSan saw 1e300 converted to an
  // integer it does not fit.
  TempDir tmp;
  const auto r = train_from_config(tmp, R"({"model_type": "llama", "vocab_size": 64, "hidden_size": 16,
      "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "rope_scaling": {"rope_type": "llama3",
      "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 1e300}})",
                                   {});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--policy.rope_scaling: \"original_max_position_embeddings\" is "));
  CHECK(contains(r.output, "it must be a number of positions from 1 to 1073741824"));
}

TEST_CASE("a config.json whose token id is no id is refused at start-up, not at the first save", "[train][errors]") {
  // Found by reading for the hf_config fuzz target: the writer of each checkpoint's config.json
  // refused it, after training, so that the run's first save failed.
  TempDir tmp;
  const auto r = train_from_config(tmp, R"({"model_type": "llama", "vocab_size": 64, "hidden_size": 16,
      "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "bos_token_id": "<s>"})",
                                   {"--steps=1"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--policy.bos_token_id=<s> is not null, a token id or a list of token ids"));
  CHECK_FALSE(contains(r.output, "training done"));
}
