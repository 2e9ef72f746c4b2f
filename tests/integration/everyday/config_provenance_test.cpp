// --print_config and configuration errors: every value with its source, all problems at once, and the
// provenance a checkpoint keeps beside train_config.json.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// `text` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// shardkit-train with `args` under the variables `env` ("NAME=value"); stdout alone in `output`,
/// stderr in `errors`.
struct Split {
  int exit_code;
  std::string output, errors;
};
Split train_with_env(const TempDir& dir, const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::string cmd = "env";
  for (const auto& e : env) cmd += " " + shell_quote(e);
  cmd += " " + shell_quote(bin("shardkit-train"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  // In a subshell: run_command merges what is left of stderr into stdout.
  const auto r = run_command("(" + cmd + " 2>" + shell_quote(dir / "stderr.txt") + ")");
  return {r.exit_code, r.output, slurp(dir / "stderr.txt")};
}

/// The start of `key`'s entry in train_config.provenance.json, up to the text of "from" (which
/// may continue, and a note may follow).
std::string entry(const std::string& key, const std::string& value, const std::string& source,
                  const std::string& from) {
  return "\"" + key + "\": {\"value\": " + value + ", \"source\": \"" + source + "\", \"from\": \"" + from;
}

const char* const kGolden = SHARDKIT_SOURCE_DIR "/tests/integration/everyday/golden/print_config.txt";

}  // namespace

TEST_CASE("--print_config prints every resolved value with its source (file, flags and environment) and exits") {
  TempDir dir("sk-print-config");
  std::ofstream(dir / "run.toml") << "# A run configured from a file, flags and the environment together.\n"
                                     "steps = 40\n"
                                     "save_freq = 20\n"
                                     "[policy]\n"
                                     "hidden_dim = 32\n"
                                     "[optimizer]\n"
                                     "lr = 3e-4\n"
                                     "[accelerator.gradient_accumulation]\n"
                                     "steps = 2\n";
  fs::create_directories(dir / "more_plugins");
  // Two processes as a launcher would describe them; --print_config joins no process group.
  const std::vector<std::string> env = {"WORLD_SIZE=2", "RANK=0", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=2",
                                        "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500",
                                        "SHARDKIT_PLUGIN_PATH=" + (dir / "more_plugins")};
  // Space-separated values and a '-' spelling, as argparse and draccus users write them.
  const auto r = train_with_env(dir, env,
                                {"--config_path=" + (dir / "run.toml"), "--steps", "60", "--batch-size=4",
                                 "--seed", "7", "--output_dir", dir / "run", "--print_config"});
  INFO(r.output << r.errors);
  REQUIRE(r.exit_code == 0);
  CHECK(r.errors.empty());
  CHECK_FALSE(fs::exists(dir / "run"));  // nothing trained, no folder created
  const auto printed = replace_all(r.output, dir.path(), "<dir>");
  if (std::getenv("SHARDKIT_UPDATE_GOLDEN")) std::ofstream(kGolden) << printed;
  INFO("expected output: " << kGolden << " (after an intended change, rerun this test with "
                           "SHARDKIT_UPDATE_GOLDEN=1 to rewrite it, and review the diff)");
  CHECK(printed == slurp(kGolden));

  // Rank 1 of the same run prints nothing and exits 0 too.
  auto rank1 = env;
  rank1[1] = "RANK=1";
  rank1[2] = "LOCAL_RANK=1";
  const auto other = train_with_env(dir, rank1, {"--config_path=" + (dir / "run.toml"), "--print_config=true"});
  INFO(other.output << other.errors);
  CHECK(other.exit_code == 0);
  CHECK(other.output.empty());
}

TEST_CASE("a checkpoint keeps the provenance of its configuration beside train_config.json") {
  TempDir dir("sk-provenance");
  std::ofstream(dir / "run.json") << "{\n  \"save_freq\": 2,\n  \"optimizer\": {\"lr\": 0.002}\n}\n";
  const auto first = run_program("shardkit-train", tiny_run(dir / "run", {"--config_path=" + (dir / "run.json"),
                                                                          "--steps", "2"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto saved = slurp(dir / "run/checkpoints/000002/pretrained_model/train_config.provenance.json");
  CHECK(contains(saved, entry("steps", "2", "command line", "--steps") + "\"}"));
  CHECK(contains(saved, entry("optimizer.lr", "0.002", "config file", dir / "run.json:3:23") + "\"}"));
  CHECK(contains(saved, entry("optimizer.beta1", "0.9", "default", "default") + "\"}"));
  CHECK(contains(saved, entry("job_name", "\"mlp\"", "default", "default") + "\", \"note\": \"empty means the policy type\"}"));
  // train_config.json itself stays what LeRobot and --resume read: values only.
  const auto config = slurp(dir / "run/checkpoints/000002/pretrained_model/train_config.json");
  CHECK(contains(config, "\"lr\": 0.002"));
  CHECK_FALSE(contains(config, "source"));
  // Both are JSON, and every value of train_config.json has its entry, with the same value.
  const auto same = run_command(python() + " -c " + shell_quote(R"(
import json, sys
config = json.load(open(sys.argv[1]))
provenance = json.load(open(sys.argv[2]))
def flat(d, prefix=""):
    for k, v in d.items():
        yield from flat(v, prefix + k + ".") if isinstance(v, dict) else [(prefix + k, v)]
values = dict(flat(config))
assert set(values) == set(provenance), sorted(set(values) ^ set(provenance))
assert all(values[k] == provenance[k]["value"] for k in values), [k for k in values if values[k] != provenance[k]["value"]]
print("same", len(values))
)") + " " + shell_quote(dir / "run/checkpoints/000002/pretrained_model/train_config.json") + " " +
                                shell_quote(dir / "run/checkpoints/000002/pretrained_model/train_config.provenance.json"));
  INFO(same.output);
  CHECK(same.exit_code == 0);
  CHECK(contains(same.output, "same "));

  // On resume, the values that came from the checkpoint say so.
  const auto resumed = run_program("shardkit-train", {"--resume=true", "--steps=4", "--config_path=" +
                                                      (dir / "run/checkpoints/last/pretrained_model/train_config.json")});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto again = slurp(dir / "run/checkpoints/000004/pretrained_model/train_config.provenance.json");
  const auto saved_config = dir / "run/checkpoints/last/pretrained_model/train_config.json";
  // A flag over a saved value says what it replaced.
  CHECK(contains(again, entry("steps", "4", "command line", "--steps") + "\", \"note\": \"over 2 from saved config " +
                            saved_config + ":"));
  CHECK(contains(again, entry("optimizer.lr", "0.002", "saved config", "saved config " + saved_config + ":")));

  // --print_config on resume shows the same, and writes nothing.
  const auto last = dir / "run/checkpoints/last/pretrained_model/train_config.json";
  const auto printed = run_program("shardkit-train", {"--resume=true", "--steps=6", "--config_path=" + last,
                                                      "--print_config=true"});
  INFO(printed.output);
  CHECK(printed.exit_code == 0);
  CHECK(contains(printed.output, "# saved config " + last + ":"));
  CHECK(contains(printed.output, "# saved config (the run folder that holds the checkpoint)\n"));
  CHECK(contains(printed.output, "# command line --steps; over 4 from saved config " + last + ":"));
  CHECK_FALSE(fs::exists(dir / "run/checkpoints/000006"));
}

TEST_CASE("several configuration problems are reported together, defaults marked as defaults") {
  TempDir dir("sk-config-errors");
  std::ofstream(dir / "run.json") << "{\n  \"batch_size\": \"eight\",\n  \"steps\": 10\n}\n";
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--config_path=" + (dir / "run.json"),
                                                                      "--accelerator.gradient_accumulation.steps=3"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "3 configuration errors:"));
  CHECK(contains(r.output, "--batch_size=eight (from " + (dir / "run.json") + ":2:17): expected an integer"));
  CHECK(contains(r.output, "--save_freq=1000 (default) is not a multiple of "
                           "--accelerator.gradient_accumulation.steps=3: checkpoints are taken only at optimizer updates"));
  CHECK(contains(r.output, "--steps=10 (from " + (dir / "run.json") + ":3:12) is not a multiple of "
                           "--accelerator.gradient_accumulation.steps=3: the run must end on an optimizer update"));
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("two spellings of one option are refused naming both; a mistyped plugin gets a did-you-mean") {
  TempDir dir("sk-config-spellings");
  auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--save-freq=5", "--save_freq=10"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--save-freq=5 (from command line) and --save_freq=10 (from command line) are two "
                           "spellings of the option --save_freq; give it once"));

  r = run_program("shardkit-train", tiny_run(dir / "run", {"--policy.type=mpl"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "unknown policy 'mpl'; did you mean 'mlp'? available: "));
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("a DeepSpeed config field is a source of its own, and one that contradicts the config file names both") {
  TempDir dir("sk-provenance-ds");
  std::ofstream(dir / "run.toml") << "batch_size = 8\n";
  std::ofstream(dir / "ds.json") << "{\"train_micro_batch_size_per_gpu\": 4, \"zero_optimization\": {\"stage\": 2}}";
  std::ofstream(dir / "agrees.json") << "{\"train_micro_batch_size_per_gpu\": 8, \"zero_optimization\": {\"stage\": 2}}";
  const std::vector<std::string> env = {"WORLD_SIZE=2", "RANK=0", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500"};
  const auto args = [&](const std::string& ds) {
    return std::vector<std::string>{"--config_path=" + (dir / "run.toml"), "--distributed_backend=deepspeed",
                                    "--checkpoint_format=dcp", "--accelerator.zero.config_file=" + (dir / ds),
                                    "--print_config"};
  };
  const auto bad = train_with_env(dir, env, args("ds.json"));
  INFO(bad.output << bad.errors);
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.errors, dir / "ds.json:1:36: train_micro_batch_size_per_gpu=4 contradicts --batch_size=8 (from " +
                                 (dir / "run.toml") + ":1:14); make them agree"));

  const auto good = train_with_env(dir, env, args("agrees.json"));
  INFO(good.output << good.errors);
  CHECK(good.exit_code == 0);
  CHECK(contains(good.output, "# config file " + (dir / "agrees.json") + ":1:70 (zero_optimization.stage)\n"));
  CHECK(contains(good.output, "# config file " + (dir / "run.toml") + ":1:14\n"));  // batch_size, which agrees
}

TEST_CASE("--print_config says which device --policy.device=cuda means, without touching CUDA") {
  TempDir dir("sk-print-cuda");
  const auto r = train_with_env(dir, {"RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2"},
                                {"--policy.device=cuda", "--distributed.comm=gloo", "--print_config"});
  INFO(r.output << r.errors);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "# command line --policy.device; means cuda:1 in this process (its local rank, from "
                           "the environment)\n"));
}
