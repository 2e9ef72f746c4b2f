// One exit code per class of mistake, wherever it is found (docs/cli.md#exit-codes): 2 for a
// configuration error (the command names what is not there, not of the kind expected, or not
// supported), 1 for a runtime failure (what is named is there but damaged, or the run fails).
//
// Before issue 26, a shardkit::Error other than ConfigError exited 2 when found before the trainer
// was built and 1 after: the same unsupported tokenizer exited 2 under --dry_run=true and 1 in a
// real start, a damaged train_config.json 2 and a damaged model file 1. Each mistake below that
// is found while the dataset or policy is made runs both ways, and must give the same code.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

constexpr int kConfiguration = 2;
constexpr int kRuntime = 1;

/// A tokenizer.json shardkit reads (BPE, no merges): enough to reach the data files.
const char* const kTokenizer = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "</s>": 2}, "merges": []}})";

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

struct Mistake {
  std::string name;
  std::vector<std::string> args;  ///< shardkit-train's flags
  int code;                       ///< kConfiguration or kRuntime
  std::string message;            ///< part of the error: the mistake meant is the one found
};

/// Runs `m` and checks its exit code, that the error is the one meant, and the class printed
/// before it (fail() in train_main.cpp).
void check(const Mistake& m) {
  const auto r = run_program("shardkit-train", m.args);
  INFO(m.name << " (expected exit " << m.code << ")\n" << r.output);
  CHECK(r.exit_code == m.code);
  CHECK(contains(r.output, m.message));
  CHECK(contains(r.output, m.code == kConfiguration ? "shardkit-train: configuration error: " : "shardkit-train: error: "));
}

}  // namespace

TEST_CASE("a mistake in what the dataset or policy reads exits with its class's code, in a real start and a dry run") {
  TempDir dir("sk-exit-codes");
  write(dir / "tokenizer.json", kTokenizer);
  write(dir / "wordpiece.json", R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})");
  write(dir / "broken_tokenizer.json", R"({"model": )");
  write(dir / "data.jsonl", "{\"text\": \"ab\"}\n{\"text\": \"ba\"}\n");
  write(dir / "broken.jsonl", "{\"text\": \"ab\"}\n{\"text\": \n");
  const auto text_run = [&](const std::string& out, const std::string& data, const std::string& tokenizer) {
    return std::vector<std::string>{"--output_dir=" + dir / out, "--dataset.type=text", "--dataset.path=" + data,
                                    "--dataset.tokenizer=" + tokenizer, "--dataset.cache_dir=" + dir / "cache",
                                    "--steps=2", "--num_threads=1"};
  };

  const std::vector<Mistake> mistakes = {
      // Configuration errors: name another tokenizer.
      {"a tokenizer shardkit does not support", text_run("wordpiece", dir / "data.jsonl", dir / "wordpiece.json"),
       kConfiguration, "model type 'WordPiece' is not supported"},
      {"a tokenizer that is not there", text_run("missing", dir / "data.jsonl", dir / "nowhere.json"),
       kConfiguration, "nowhere.json: no such tokenizer.json file"},
      // Runtime failures: the file named is there, and damaged.
      {"a damaged tokenizer.json", text_run("broken-tok", dir / "data.jsonl", dir / "broken_tokenizer.json"),
       kRuntime, "broken_tokenizer.json: not valid JSON"},
      {"a malformed line of the data", text_run("broken-data", dir / "broken.jsonl", dir / "tokenizer.json"),
       kRuntime, "broken.jsonl:2: not a JSON object"},
      // A factory that throws what nothing expected: a failure, not a plugin the loader refused.
      {"a policy plugin that fails to start",
       {"--output_dir=" + dir / "throws", "--plugins=" + std::string(SHARDKIT_FIXTURE_DIR) + "/libshardkit-policy-throws.so",
        "--policy.type=throws", "--steps=2", "--num_threads=1"},
       kRuntime, "policy 'throws' failed to start: the throws fixture refuses to start"},
  };
  for (const auto& m : mistakes) {
    // A real start finds it while the trainer is built; a dry run before any trainer exists.
    check(m);
    auto dry = m;
    dry.name += ", --dry_run=true";
    dry.args.push_back("--dry_run=true");
    check(dry);
  }
  for (const auto* out : {"wordpiece", "missing", "broken-tok", "broken-data", "throws"})
    CHECK_FALSE(fs::exists(dir / out));  // a failed start leaves no folder, whatever its class
}

TEST_CASE("checkpoint and --policy.path mistakes exit with their class's code, wherever they are found") {
  TempDir dir("sk-exit-codes-ck");
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=8", "--save_freq=2"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto checkpoint = [&](const std::string& step) { return dir / ("run/checkpoints/" + step); };
  const auto resume = [&](const std::string& step, const std::string& steps) {
    return std::vector<std::string>{"--resume=true", "--steps=" + steps, "--num_threads=1",
                                    "--config_path=" + checkpoint(step) + "/pretrained_model/train_config.json"};
  };
  // Saved policies for --policy.path (a pretrained_model folder, as a checkpoint holds it): one
  // with a damaged config.json, one with damaged weights.
  for (const auto* copy : {"damaged-config", "damaged-weights"}) {
    fs::create_directory(dir / copy);
    fs::copy(checkpoint("000008") + "/pretrained_model", dir / copy + "/pretrained_model", fs::copy_options::recursive);
  }
  write(dir / "damaged-config/pretrained_model/config.json", "{\"type\": ");
  const auto weights = dir / "damaged-weights/pretrained_model/model.safetensors";
  fs::resize_file(weights, fs::file_size(weights) / 2);
  fs::create_directory(dir / "not-a-model");
  const auto start_from = [&](const std::string& out, const std::string& path) {
    return tiny_run(dir / out, {"--steps=2", "--save_checkpoint=false", "--policy.path=" + path});
  };
  // The checkpoints, each with one mistake of its own.
  fs::remove(checkpoint("000002") + "/training_state/training_step.json");
  write(checkpoint("000006") + "/pretrained_model/train_config.json", "{\"steps\": ");
  const auto model = checkpoint("000008") + "/pretrained_model/model.safetensors";
  fs::resize_file(model, fs::file_size(model) / 2);

  const std::vector<Mistake> mistakes = {
      // Configuration errors, found before the trainer is built and while it resumes.
      {"an incomplete checkpoint", resume("000002", "20"), kConfiguration, "is not a complete shardkit checkpoint"},
      {"a checkpoint at the last step asked for", resume("000004", "4"), kConfiguration,
       "is at step 4 and --steps=4"},
      {"--policy.path at a folder without config.json", start_from("p1", dir / "not-a-model"), kConfiguration,
       "is not a pretrained_model folder (no config.json)"},
      // Runtime failures: a damaged file of what is named, found before the trainer is built
      // (the config files) and while it loads (the weights).
      {"a damaged train_config.json of the checkpoint", resume("000006", "20"), kRuntime,
       "the checkpoint's train_config.json is damaged"},
      {"a truncated model file of the checkpoint", resume("000008", "20"), kRuntime, "model.safetensors"},
      {"--policy.path with a damaged config.json", start_from("p2", dir / "damaged-config/pretrained_model"), kRuntime,
       "the saved policy's config.json is damaged"},
      {"--policy.path with truncated weights", start_from("p3", dir / "damaged-weights/pretrained_model"), kRuntime,
       "model.safetensors"},
  };
  for (const auto& m : mistakes) check(m);
  // Nothing was written: the run keeps its 8 logged steps, and no other folder appeared.
  CHECK(read_metrics(dir / "run").size() == 8);
  for (const auto* out : {"p1", "p2", "p3"}) CHECK_FALSE(fs::exists(dir / out));
}
