// The trackio logger: LeRobot's --trackio.enable records the run where trackio 0.43 finds it, and
// trackio's own Python API reads back metrics.jsonl's values, the config, and one run per resume.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../distributed/launch.hpp"
#include "program_environment.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// What trackio's API shows of a project.
struct TrackioProject {
  std::map<std::string, std::string> run_ids;                            ///< name -> id
  std::map<std::string, std::map<std::string, std::string>> configs;     ///< run -> key -> JSON
  std::map<std::string, std::map<std::int64_t, std::map<std::string, double>>> logs;  ///< run -> step -> values
  int repeated = 0;  ///< values logged twice for the same run, step and name
};

TrackioProject read_trackio(const std::string& trackio_dir, const std::string& project) {
  const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/loggers/read_trackio.py";
  const auto r = run_command("env TRACKIO_DIR=" + shell_quote(trackio_dir) + " " +
                             shell_quote(SHARDKIT_TRACKIO_PYTHON) + " " + shell_quote(script) + " " + shell_quote(project));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);  // also when trackio is missing (scripts/setup.sh installs it): never a silent pass
  TrackioProject out;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind, run;
    fields >> kind >> run;
    if (kind == "run") {
      fields >> out.run_ids[run];
    } else if (kind == "config") {
      std::string key, value;
      fields >> key;
      std::getline(fields >> std::ws, value);
      out.configs[run][key] = value;
    } else if (kind == "log") {
      std::int64_t step = 0;
      std::string name, value;
      fields >> step >> name >> value;
      auto& values = out.logs[run][step];
      if (values.count(name)) ++out.repeated;
      values[name] = std::stod(value);
    }
  }
  return out;
}

/// trackio holds, for `run`, exactly metrics.jsonl's steps, each with every value of its line.
void check_same_values(const std::vector<MetricsLine>& lines, const TrackioProject& project, const std::string& run) {
  REQUIRE(project.logs.count(run));
  const auto& logs = project.logs.at(run);
  CHECK(logs.size() == lines.size());
  for (const auto& line : lines) {
    INFO("step " << line.step);
    REQUIRE(logs.count(line.step));
    const auto& values = logs.at(line.step);
    CHECK(values.size() == line.raw.size() - 1);  // every value but the step itself
    for (const auto& [name, text] : line.raw) {
      if (name == "step") continue;
      INFO(name << " = " << text);
      REQUIRE(values.count(name));
      CHECK(values.at(name) == line.number(name));
    }
  }
}

}  // namespace

TEST_CASE("--trackio.enable=true records a 2-rank run that trackio's API reads back as metrics.jsonl") {
  TempDir dir("sk-trackio");
  const auto store = dir / "trackio";
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=6", "--trackio.enable=true", "--trackio.project=sk-test",
                                                   "--job_name=tiny", "--logger.trackio.dir=" + store}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(store + "/sk-test.db"));  // the project's database, where trackio looks
  const auto project = read_trackio(store, "sk-test");
  REQUIRE(project.run_ids.size() == 1);  // only rank 0 writes
  REQUIRE(project.run_ids.count("tiny"));
  CHECK(slurp(dir / "run/trackio_run_id") == project.run_ids.at("tiny") + "\n");
  check_same_values(read_metrics(dir / "run"), project, "tiny");
  // The resolved configuration, with the fields trackio's own init adds.
  const auto& config = project.configs.at("tiny");
  CHECK(config.at("steps") == "6");
  CHECK(config.at("job_name") == "\"tiny\"");
  CHECK(config.count("_Created"));
}

TEST_CASE("a resumed run continues the same trackio run, without the steps the interrupted attempt logged twice") {
  TempDir dir("sk-trackio-resume");
  const auto store = dir / "trackio";
  const auto first = launch(2, tiny_run(dir / "run", {"--steps=6", "--save_freq=3", "--trackio.enable=true",
                                                       "--job_name=again", "--logger.trackio.dir=" + store}));
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  // As if the run had been killed after logging step 6 but before its last checkpoint.
  roll_back_copy(dir / "run", dir / "again", "000003");
  const auto resumed = launch(2, {"--resume=true", "--output_dir=" + (dir / "again"), "--distributed.timeout_s=60"});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  const auto project = read_trackio(store, "lerobot");  // LeRobot's default project
  REQUIRE(project.run_ids.size() == 1);
  CHECK(project.repeated == 0);  // steps 4-6 of the interrupted attempt were replaced, not added
  check_same_values(read_metrics(dir / "again"), project, "again");
}

TEST_CASE("trackio's own folder: TRACKIO_DIR, as trackio reads it") {
  TempDir dir("sk-trackio-env");
  const auto r = run_program_with_environment("shardkit-train",
                                              tiny_run(dir / "run", {"--steps=2", "--trackio.enable=true", "--job_name=env"}),
                                              {"TRACKIO_DIR=" + dir / "store"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto project = read_trackio(dir / "store", "lerobot");
  REQUIRE(project.run_ids.count("env"));
  check_same_values(read_metrics(dir / "run"), project, "env");
}

TEST_CASE("a store trackio cannot write gets one warning, and training goes on") {
  TempDir dir("sk-trackio-unwritable");
  std::ofstream(dir / "not-a-folder") << "x";
  const auto r = run_program("shardkit-train", tiny_run(dir / "run", {"--steps=4", "--trackio.enable=true",
                                                                      "--logger.trackio.dir=" + dir / "not-a-folder"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "trackio: not recording this run"));
  CHECK(r.output.find("trackio:") == r.output.rfind("trackio:"));  // once
  CHECK(read_metrics(dir / "run").size() == 4);
}
