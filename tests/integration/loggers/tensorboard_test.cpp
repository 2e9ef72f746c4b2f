// The tensorboard logger: event files read back by the real tensorboard package equal metrics.jsonl.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// tag -> step -> value, as tensorboard's EventAccumulator reads the folder `dir`.
std::map<std::string, std::map<std::int64_t, double>> tensorboard_scalars(const std::string& dir) {
  const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/loggers/read_tensorboard.py";
  const auto r = run_command(python() + " " + shell_quote(script) + " " + shell_quote(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);  // also when the tensorboard package is missing: never a silent pass
  std::map<std::string, std::map<std::int64_t, double>> out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind, tag, value;
    std::int64_t step = 0;
    if (fields >> kind >> tag >> step >> value && kind == "scalar") out[tag][step] = std::stod(value);
  }
  return out;
}

/// Every value of every line of metrics.jsonl is in TensorBoard as train/<name> (eval/<name> for
/// the eval_* values, LeRobot's group) at its step,
/// equal to the value rounded to float (TensorBoard's simple_value is a float).
void check_same_values(const std::vector<MetricsLine>& lines,
                       const std::map<std::string, std::map<std::int64_t, double>>& scalars) {
  REQUIRE_FALSE(lines.empty());
  std::map<std::string, std::size_t> expected;  // tag -> lines holding its value
  for (const auto& line : lines) {
    for (const auto& [name, text] : line.raw) {
      if (name == "step") continue;
      INFO("step " << line.step << ", " << name << " = " << text);
      const auto group = name.rfind("eval_", 0) == 0 ? "eval/" : "train/";
      ++expected[group + name];
      const auto tag = scalars.find(group + name);
      REQUIRE(tag != scalars.end());
      const auto at = tag->second.find(line.step);
      REQUIRE(at != tag->second.end());
      CHECK(at->second == static_cast<double>(static_cast<float>(line.number(name))));
    }
  }
  // Nothing more than metrics.jsonl: one value per logged step and metric.
  for (const auto& [tag, steps] : scalars) {
    INFO(tag);
    CHECK(steps.size() == expected[tag]);
  }
}

std::vector<fs::path> event_files(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) files.push_back(e.path());
  return files;
}

}  // namespace

TEST_CASE("--logger.type=tensorboard writes event files that tensorboard reads back as metrics.jsonl's values") {
  // Evaluation values go under LeRobot's eval/ group, the others under train/.
  TempDir dir("sk-tensorboard");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=6", "--logger.type=tensorboard",
                                                                      "--eval_freq=3", "--dataset.validation_samples=32"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto lines = read_metrics(dir / "run");  // jsonl stays on
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].raw.count("mae"));  // the policy's own metric too
  CHECK(lines[2].raw.count("eval_loss"));  // and the evaluation's, under eval/
  REQUIRE(event_files(dir / "run/tensorboard").size() == 1);
  check_same_values(lines, tensorboard_scalars(dir / "run/tensorboard"));
}

TEST_CASE("a resumed run adds an event file, and tensorboard shows the resumed values after the checkpoint") {
  TempDir dir("sk-tensorboard-resume");
  const auto first = launch(2, tiny_run(dir / "run", {"--steps=6", "--save_freq=3", "--logger.type=jsonl,tensorboard"}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // Only rank 0 writes: one file for the two processes.
  REQUIRE(event_files(dir / "run/tensorboard").size() == 1);
  // As if the run had been killed after logging step 6 but before its last checkpoint.
  roll_back_copy(dir / "run", dir / "again", "000003");
  const auto resumed = launch(2, {"--resume=true", "--output_dir=" + (dir / "again"), "--distributed.timeout_s=60"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(event_files(dir / "again/tensorboard").size() == 2);
  const auto lines = read_metrics(dir / "again");
  REQUIRE(lines.size() == 6);
  // Steps 4-6 were logged twice; the timings differ between the two runs, and TensorBoard
  // shows the resumed run's (purged at its session start), as metrics.jsonl keeps them.
  check_same_values(lines, tensorboard_scalars(dir / "again/tensorboard"));
  CHECK(lines[5].raw.at("elapsed_s") != read_metrics(dir / "run")[5].raw.at("elapsed_s"));
}

TEST_CASE("an unknown logger is refused naming the loggers there are") {
  TempDir dir("sk-logger-unknown");
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=2", "--logger.type=wandb"}));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "wandb"));
  CHECK(contains(r.output, "tensorboard"));
  CHECK_FALSE(fs::exists(dir / "run"));
}
