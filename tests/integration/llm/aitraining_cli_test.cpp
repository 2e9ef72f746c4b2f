// shardkit-llm: AITraining's `llm --train` command line and YAML config, run through the real
// binaries on a tiny transformers Llama with a chat template and a messages dataset: the guide's
// commands under DDP and deepspeed at AUTOTRAIN_FORCE_NUM_PROCESSES=2 with --peft, the YAML form
// resolving to the same shardkit-train options, and AITraining's refusals as one-line errors.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "../distributed/launch.hpp"
#include "lm_fixture.hpp"
#include "../llama/llama_support.hpp"
#include "program_environment.hpp"

using namespace shardkit::test;

namespace {

namespace fs = std::filesystem;

/// dir/model (lm_fixture.py's tiny Llama with a chat template) and dir/data/train.jsonl (48
/// conversations), made once per test case.
void make_project_inputs(const TempDir& dir) {
  lm_fixture("make", dir.path());
  fs::create_directories(dir / "data");
  std::ofstream(dir / "data/train.jsonl") << conversations(48);
}

/// The entries of folder/checkpoints.
std::set<std::string> checkpoints_of(const std::string& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder + "/checkpoints")) names.insert(e.path().filename().string());
  return names;
}

ProcessResult llm(const std::vector<std::string>& args, const std::vector<std::string>& environment = {}) {
  return run_program_with_environment("shardkit-llm", args, environment);
}

/// The value --print_config shows for `key` ("" when absent).
std::string printed(const std::string& output, const std::string& key) {
  const auto at = output.find("\n" + key + " ");
  if (at == std::string::npos) return "";
  const auto eq = output.find("= ", at);
  const auto end = output.find_first_of(" \n", eq + 2);
  auto value = output.substr(eq + 2, end - eq - 2);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  return value;
}

}  // namespace

TEST_CASE("shardkit-llm runs the guide's command: --trainer sft --peft on 2 processes (AUTOTRAIN_FORCE_NUM_PROCESSES) "
          "under DDP and deepspeed, its output also in autotrain.log") {
  TempDir dir("sk-llm-cli");
  make_project_inputs(dir);
  lm_fixture("bf16", dir.path());
  for (const std::string backend : {"", "deepspeed"}) {
    const auto project = dir / (backend.empty() ? "ddp-project" : "deepspeed-project");
    // The deepspeed run's base is stored in bfloat16: its merged model is saved so.
    const auto model = dir / (backend.empty() ? "model" : "model-bf16");
    INFO(project);
    std::vector<std::string> args = {"--train", "--model", model, "--data-path", dir / "data",
                                     "--project-name", project, "--trainer", "sft", "--peft", "--block-size", "64",
                                     "--lr", "1e-3", "--batch-size", "2", "--gradient-accumulation", "2",
                                     "--log", "tensorboard", "--ddp-timeout", "120"};
    if (!backend.empty()) args.insert(args.end(), {"--distributed-backend", backend});
    const auto r = llm(args, {"AUTOTRAIN_FORCE_NUM_PROCESSES=2"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.output, "2 processes (no CUDA device); running:\n  shardkit-run --nproc-per-node=2 shardkit-train "
                             "--policy.path=" + model));
    CHECK(contains(r.output, backend.empty() ? "--distributed_backend=ddp" : "--distributed_backend=deepspeed"));
    CHECK(contains(r.output, "--peft.method_type=LORA --peft.r=16 --peft.lora_alpha=32 --peft.lora_dropout=0.05 "
                             "--peft.target_modules=all-linear --peft.merge=true"));
    const auto log = slurp(project + "/autotrain.log");
    CHECK(contains(log, "checkpoint saved"));
    CHECK(contains(log, "LoRA: "));
    // AITraining's default: transformers' gradient checkpointing on.
    CHECK(contains(log, "activation checkpointing (full): 2 of the wrap units"));
    CHECK(fs::exists(project + "/checkpoints/last/pretrained_model/adapter_model.safetensors"));
    CHECK(fs::exists(project + "/merged_model/model.safetensors"));
    CHECK(fs::is_directory(project + "/tensorboard"));
    // AITraining's project folder: the merged model and its tokenizer at the top (no adapter
    // files), in the base's dtype; a model card; runs/; training_params.json. transformers loads it.
    for (const auto* file : {"model.safetensors", "config.json", "tokenizer.json", "README.md",
                             "training_params.json"})
      CHECK(fs::exists(project + "/" + file));
    CHECK_FALSE(fs::exists(project + "/adapter_model.safetensors"));
    CHECK(fs::is_directory(project + "/runs"));
    const auto merged = read_tensors(project + "/model.safetensors");
    const auto dtype = backend.empty() ? torch::kFloat32 : torch::kBFloat16;
    for (const auto& [name, t] : merged) {
      INFO(name);
      CHECK(t.scalar_type() == dtype);
    }
    const auto config = boost::json::parse(slurp(project + "/config.json")).as_object();
    const auto* saved = config.contains("dtype") ? &config.at("dtype") : &config.at("torch_dtype");
    CHECK(saved->as_string() == (backend.empty() ? "float32" : "bfloat16"));
    lm_fixture("load", project);
  }
}

TEST_CASE("shardkit-llm --resume-from-checkpoint latest ends where an uninterrupted run does, bitwise; "
          "save_total_limit keeps the newest checkpoints") {
  TempDir dir("sk-llm-resume");
  make_project_inputs(dir);
  const auto run = [&](const std::string& project, std::vector<std::string> extra) {
    std::vector<std::string> args = {"--train", "--model", dir / "model", "--data-path", dir / "data",
                                     "--project-name", project, "--trainer", "sft", "--block-size", "64",
                                     "--lr", "1e-3", "--batch-size", "2", "--gradient-accumulation", "2",
                                     "--log", "none", "--save-strategy", "steps", "--save-steps", "4"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = llm(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return r.output;
  };
  run(dir / "straight", {"--save-total-limit", "10"});
  roll_back_copy(dir / "straight", dir / "resumed", "000008");
  fs::remove(dir / "resumed/model.safetensors");
  // save_steps counts optimizer updates, as transformers: 4 updates of 2 loop steps.
  CHECK(fs::exists(dir / "resumed/checkpoints/000008"));
  // --save_total_limit removes checkpoints: never beside entries shardkit did not write.
  std::ofstream(dir / "resumed/checkpoints/notes.txt") << "mine";
  const auto refused = llm({"--train", "--model", dir / "model", "--data-path", dir / "data", "--project-name",
                            dir / "resumed", "--save-total-limit", "2", "--resume-from-checkpoint", "latest"});
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.output, "which holds entries shardkit did not write (notes.txt)"));
  fs::remove(dir / "resumed/checkpoints/notes.txt");
  const auto resumed = run(dir / "resumed", {"--save-total-limit", "2", "--resume-from-checkpoint", "latest"});
  CHECK(contains(resumed, "checkpoint 000008 removed (--save_total_limit=2)"));
  CHECK(contains(resumed, "--resume=true"));
  CHECK(contains(resumed, "resumed from"));
  const auto a = read_tensors(dir / "straight/model.safetensors");
  const auto b = read_tensors(dir / "resumed/model.safetensors");
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    INFO(name);
    CHECK(torch::equal(t, b.at(name)));
  }
  // 24 loop steps saved every 8: the straight run keeps all 3, the resumed one its newest 2.
  CHECK(checkpoints_of(dir / "straight") == std::set<std::string>{"000008", "000016", "000024", "last"});
  CHECK(checkpoints_of(dir / "resumed") == std::set<std::string>{"000016", "000024", "last"});
  // A checkpoint folder that is not one is named.
  const auto bad = llm({"--train", "--model", dir / "model", "--data-path", dir / "data", "--project-name",
                        dir / "other", "--resume-from-checkpoint", dir / "data"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.output, "not a checkpoint folder"));
}

TEST_CASE("shardkit-llm --config takes AITraining's YAML: the same shardkit-train options as the flags, AITraining's "
          "defaults, flags over the file; it trains") {
  TempDir dir("sk-llm-yaml");
  make_project_inputs(dir);
  const auto yaml = dir / "config.yml";
  std::ofstream(yaml) << "task: llm-sft\nbase_model: " << dir / "model" << "\nproject_name: " << dir / "yaml-project"
                      << "\nlog: tensorboard\nbackend: local\n\ndata:\n  path: " << dir / "data"
                      << "\n  train_split: train\n  valid_split: null\n  chat_template: tokenizer\n"
                         "  column_mapping:\n    text_column: messages\n\nparams:\n  block_size: 64\n  lr: 1e-3\n"
                         "  peft: true\n  batch_size: 4\n  epochs: 1\n";
  const auto shown = llm({"--config", yaml, "--print_config"});
  INFO(shown.output);
  REQUIRE(shown.exit_code == 0);
  // AITraining's defaults where shardkit-train's differ, the file's values, the translation.
  const std::map<std::string, std::string> expected = {
      {"policy.path", dir / "model"}, {"dataset.path", dir / "data/train.jsonl"},
      {"dataset.text_column", "messages"}, {"dataset.chat_template", "tokenizer"}, {"dataset.max_seq_len", "64"},
      {"optimizer.lr", "0.001"}, {"batch_size", "4"}, {"epochs", "1"},
      {"accelerator.gradient_accumulation.steps", "4"}, {"scheduler.type", "linear"},
      {"scheduler.warmup_ratio", "0.1"}, {"optimizer.weight_decay", "0.0"}, {"optimizer.grad_clip_norm", "1.0"},
      {"seed", "42"}, {"peft.method_type", "LORA"}, {"peft.lora_alpha", "32.0"}, {"peft.lora_dropout", "0.05"},
      {"peft.target_modules", "all-linear"}, {"peft.merge", "true"}, {"output_dir", dir / "yaml-project"},
      // AITraining's logging_steps -1: 20% of 48 examples per batch of 4 = 2 updates of 4 loop steps.
      {"log_freq", "8"}, {"save_strategy", "epoch"}, {"accelerator.activation_checkpointing.mode", "full"}};
  for (const auto& [key, value] : expected) {
    INFO(key);
    CHECK(printed(shown.output, key) == value);
  }
  CHECK_FALSE(fs::exists(dir / "yaml-project"));  // --print_config creates nothing
  const auto overridden = llm({"--config", yaml, "--lr", "2e-3", "--disable-gradient-checkpointing", "--print_config"});
  CHECK(printed(overridden.output, "optimizer.lr") == "0.002");
  CHECK(printed(overridden.output, "accelerator.activation_checkpointing.mode") == "none");

  const auto trained = llm({"--config", yaml});
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  CHECK(contains(trained.output, "1 process (no CUDA device); running:\n  shardkit-train --policy.path="));
  CHECK(fs::exists(dir / "yaml-project/checkpoints/last/pretrained_model/adapter_model.safetensors"));
  CHECK(contains(slurp(dir / "yaml-project/autotrain.log"), "checkpoint saved"));

  // training_params.json: AITraining's field names and types, no token; it runs the same again.
  const auto recorded = boost::json::parse(slurp(dir / "yaml-project/training_params.json")).as_object();
  CHECK(recorded.at("lr").as_double() == 1e-3);
  CHECK(recorded.at("block_size").as_int64() == 64);
  CHECK(recorded.at("peft").as_bool());
  CHECK(recorded.at("lora_alpha").as_int64() == 32);
  CHECK(recorded.at("trainer").as_string() == "sft");
  CHECK(recorded.at("valid_split").is_null());
  CHECK(recorded.at("text_column").as_string() == "messages");
  CHECK_FALSE(recorded.contains("token"));
  const auto again = llm({"--training_config", dir / "yaml-project/training_params.json", "--print_config"});
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  for (const auto& [key, value] : expected) {
    INFO(key);
    CHECK(printed(again.output, key) == value);
  }
}

TEST_CASE("shardkit-llm answers what it cannot do in one line each, and exits 2") {
  TempDir dir("sk-llm-errors");
  make_project_inputs(dir);
  const std::vector<std::string> base = {"--train", "--model", dir / "model", "--data-path", dir / "data",
                                         "--project-name", dir / "p"};
  const auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return llm(args);
  };
  const auto expect = [](const ProcessResult& r, const std::string& message) {
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, message));
  };
  // Where AITraining starts its interactive wizard.
  expect(llm({"--train", "--model", dir / "model"}),
         "missing --project-name, --data-path (AITraining would ask for them in its interactive wizard");
  expect(llm({}), "nothing to do: give --train");
  expect(with({"--epoch", "2"}), "LLMTrainingParams has no field 'epoch' (did you mean --epochs?)");
  expect(with({"--epochs", "two"}), "--epochs=two: epochs takes an integer");
  expect(with({"--trainer", "dpo"}), "--trainer=dpo: shardkit-llm has AITraining's default and sft trainers");
  expect(with({"--use-sweep"}), "use_sweep is an AITraining option shardkit-llm does not have");
  expect(with({"--unsloth"}), "--unsloth=true: unsloth is a Python library for CUDA");
  expect(with({"--push-to-hub"}), "--push-to-hub=true: shardkit-llm writes the model to the project folder");
  expect(with({"--use-flash-attention-2"}), "flash attention 2: shardkit computes attention with LibTorch's");
  expect(llm({"--train", "--model", dir / "nowhere", "--data-path", dir / "data", "--project-name", dir / "p"}),
         "nowhere: not a model folder here");
  expect(llm({"--train", "--model", dir / "model", "--data-path", dir / "model", "--project-name", dir / "p"}),
         "no train.csv or train.jsonl in it");
  std::ofstream(dir / "partial.yaml") << "task: llm-sft\nbase_model: x\n";
  expect(llm({"--config", dir / "partial.yaml"}),
         "AITraining's config needs backend, project_name, log, data (valid_split and chat_template may be null)");
  // The other fields: AITraining's default is accepted (its training_params.json lists them all),
  // another value is not; null where AITraining's field takes a value is named.
  expect(with({"--dpo-beta", "0.5"}), "--dpo-beta=0.5: dpo_beta is an AITraining option shardkit-llm does not have");
  CHECK(with({"--dpo-beta", "0.1", "--apply-chat-template", "--print_config"}).exit_code == 0);
  std::ofstream(dir / "null.yaml") << "task: llm-sft\nbackend: local\nbase_model: " << dir / "model"
                                   << "\nproject_name: " << dir / "n" << "\nlog: none\ndata:\n  path: " << dir / "data"
                                   << "\n  train_split: train\n  valid_split: null\n  chat_template: null\n"
                                      "  column_mapping: {text_column: text}\nparams:\n  batch_size: null\n";
  expect(llm({"--config", dir / "null.yaml"}), "params.batch_size is null (None), and batch_size takes a value");
  // A project that holds a run already: AITraining overwrites it, shardkit-llm says what to do.
  fs::create_directories(dir / "p/checkpoints/000004");
  expect(with({}), "holds a run already (checkpoints/): continue it with --resume-from-checkpoint latest");
  fs::remove_all(dir / "p");
  // block_size: longer than the model's 128 positions is cut to them, as AITraining.
  const auto cut = with({"--block-size", "256", "--print_config"});
  CHECK(contains(cut.output, "--block-size=256 is longer than the model's 128 positions: block_size 128"));
  CHECK(printed(cut.output, "dataset.max_seq_len") == "128");
  // Warnings, not errors: log wandb (AITraining's default) and quantization without CUDA.
  const auto warned = with({"--quantization", "int4", "--print_config"});
  INFO(warned.output);
  CHECK(warned.exit_code == 0);
  CHECK(contains(warned.output, "AITraining's default for log=wandb: shardkit does not talk to Weights & Biases"));
  CHECK(contains(warned.output, "--quantization=int4: without CUDA AITraining skips quantization"));
  CHECK(printed(warned.output, "logger.type") == "jsonl,tensorboard");
}

TEST_CASE("shardkit-llm --valid-split evaluates at each epoch's end (eval_strategy epoch) and saves there "
          "(save_strategy epoch)") {
  TempDir dir("sk-llm-valid");
  make_project_inputs(dir);
  std::ofstream(dir / "data/valid.jsonl") << conversations(8);
  const auto r = llm({"--train", "--model", dir / "model", "--data-path", dir / "data", "--project-name",
                      dir / "valid-project", "--trainer", "sft", "--block-size", "64", "--lr", "1e-3", "--batch-size",
                      "4", "--gradient-accumulation", "2", "--epochs", "2", "--valid-split", "valid", "--log", "none",
                      "--save-total-limit", "5"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "--dataset.validation_path=" + dir / "data/valid.jsonl"));
  CHECK(contains(r.output, "--eval_strategy=epoch"));
  // 48 conversations in batches of 4: 12 loop steps an epoch; evaluated and saved at 12 and 24.
  std::vector<std::int64_t> evaluated;
  for (const auto& line : read_metrics(dir / "valid-project"))
    if (line.raw.count("eval_loss")) evaluated.push_back(line.step);
  CHECK(evaluated == std::vector<std::int64_t>{12, 24});
  CHECK(checkpoints_of(dir / "valid-project") == std::set<std::string>{"000012", "000024", "last"});
}

TEST_CASE("shardkit-llm under a launcher (shardkit-run or torchrun on each node) runs shardkit-train in each rank; "
          "rank 0 lays out the project") {
  TempDir dir("sk-llm-launched");
  make_project_inputs(dir);
  const auto project = dir / "launched-project";
  const auto r = run_program("shardkit-run",
                             {"--nproc-per-node=2", std::string(SHARDKIT_BIN_DIR) + "/shardkit-llm", "--train",
                              "--model", dir / "model", "--data-path", dir / "data", "--project-name", project,
                              "--trainer", "sft", "--block-size", "64", "--batch-size", "2", "--log", "none"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "[rank0]: shardkit-llm: 2 processes (no CUDA device); running:\n"
                           "[rank0]:   shardkit-train --policy.path="));
  CHECK_FALSE(contains(r.output, "[rank1]: shardkit-llm:"));  // the command is shown once
  CHECK(contains(r.output, "--distributed_backend=ddp"));
  CHECK(contains(r.output, "Effective batch size: 2 x 2 dp workers x 4 grad accum"));
  CHECK(fs::exists(project + "/model.safetensors"));
  CHECK(contains(slurp(project + "/autotrain.log"), "training done"));
}

TEST_CASE("shardkit-llm --config: YAML aliases cannot expand a small file without end") {
  TempDir dir("sk-llm-yaml-alias");
  const std::string head = "task: llm-sft\nbase_model: m\nproject_name: p\nlog: none\nbackend: local\n"
                           "data:\n  path: d\n  train_split: train\n  valid_split: null\n  chat_template: null\n";
  // A column mapping that holds itself, and one that names the level before it three times, 14 levels deep.
  std::ofstream(dir / "self.yml") << head << "  column_mapping: &m\n    text_column: messages\n    again: *m\n";
  std::string laughs = head + "  column_mapping:\n    text_column: messages\nl0: &l0 [aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb]\n";
  for (int i = 1; i <= 14; ++i)
    laughs += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " {a: *l" + std::to_string(i - 1) + ", b: *l" +
              std::to_string(i - 1) + ", c: *l" + std::to_string(i - 1) + "}\n";
  std::ofstream(dir / "laughs.yml") << laughs << "params:\n  lr: *l14\n";
  const auto self = llm({"--config", dir / "self.yml", "--print_config"});
  INFO(self.output);
  CHECK(self.exit_code == 2);
  CHECK(contains(self.output, "deep (a mapping that holds itself through an alias?)"));
  const auto expanded = llm({"--config", dir / "laughs.yml", "--print_config"});
  INFO(expanded.output);
  CHECK(expanded.exit_code == 2);
  CHECK(contains(expanded.output, "the value expands to more than 1 MiB"));
}
