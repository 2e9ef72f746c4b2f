// Tests for YAML configuration files: the same dotted keys, positions and errors as TOML and JSON.
#include <catch2/catch.hpp>

#include "config_files.hpp"

using shardkit::ConfigError;
using shardkit::load_config_file;

TEST_CASE("a YAML file flattens into typed dotted keys with positions", "[config][yaml]") {
  const TempFile file("train.yaml",
                      "# AITraining-style\n"
                      "steps: 100\n"
                      "resume: false\n"
                      "plugins: [a.so, b.so]\n"
                      "optimizer:\n"
                      "  lr: 3.0e-4\n"
                      "  name: adamw\n"
                      "peft:\n"
                      "  target_modules:\n"
                      "    - q_proj\n"
                      "    - v_proj\n"
                      "job_name: \"42\"\n"
                      "accelerator:\n"
                      "  fsdp: {min_num_params: 1000}\n");
  const auto raw = load_config_file(file.path());
  REQUIRE(raw.size() == 8);
  CHECK(std::get<std::int64_t>(raw.at("steps").value) == 100);
  CHECK(std::get<bool>(raw.at("resume").value) == false);
  CHECK(std::get<std::string>(raw.at("plugins").value) == "a.so,b.so");
  CHECK(std::get<double>(raw.at("optimizer.lr").value) == 3.0e-4);
  CHECK(std::get<std::string>(raw.at("optimizer.name").value) == "adamw");
  CHECK(std::get<std::string>(raw.at("peft.target_modules").value) == "q_proj,v_proj");
  CHECK(std::get<std::string>(raw.at("job_name").value) == "42");  // quoted: a string
  CHECK(std::get<std::int64_t>(raw.at("accelerator.fsdp.min_num_params").value) == 1000);
  CHECK(raw.at("steps").origin == file.path() + ":2:8");
  CHECK(raw.at("optimizer.lr").origin == file.path() + ":6:7");
}

TEST_CASE("a YAML syntax error names the file, line and column", "[config][yaml]") {
  const TempFile file("bad.yaml", "steps: 3\noptimizer:\n  lr: [1, 2\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::StartsWith(file.path() + ":"));
  CHECK_THAT(message, Catch::Contains("YAML syntax error"));
}

TEST_CASE("YAML problems are all reported, each at its position", "[config][yaml]") {
  const TempFile file("bad.yaml", "steps: ~\nsteps_again:\n  - [1]\nseed: 1\nseed: 2\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::Contains(file.path() + ":1:8: key 'steps' has no value (null)"));
  CHECK_THAT(message, Catch::Contains("key 'steps_again': lists may only hold plain values"));
  CHECK_THAT(message, Catch::Contains(":5:1: key 'seed' is given twice (also at " + file.path() + ":4:7)"));
}

TEST_CASE("a YAML document that is not a mapping is refused", "[config][yaml]") {
  const TempFile file("list.yml", "- steps: 3\n");
  CHECK_THAT(load_error(file.path()), Catch::Contains("a YAML configuration is a mapping"));
}

TEST_CASE("YAML values are validated like flags, naming the file position", "[config][yaml][resolve]") {
  static const shardkit::OptionSpec kOptions[] = {
      {"steps", shardkit::OptionType::Int, "10", "Loop steps", "1", nullptr, nullptr},
      {"optimizer.lr", shardkit::OptionType::Float, "0.1", "Learning rate", "0", nullptr, nullptr},
  };
  shardkit::Schema schema;
  schema.add("", kOptions, 2, "core");
  const TempFile file("train.yaml", "steps: 50\noptimizer:\n  lr: 3e-4\n");
  const auto config = shardkit::resolve(schema, load_config_file(file.path()), shardkit::parse_flags({"--steps=7"}));
  CHECK(config.get_int("steps") == 7);
  CHECK(config.get_float("optimizer.lr") == 3e-4);

  const TempFile bad("bad.yaml", "steps: 0\n");
  try {
    shardkit::resolve(schema, load_config_file(bad.path()), {});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--steps=0 (from " + bad.path() + ":1:8): must be >= 1"));
  }
}
