// Limits before work: a configuration file cannot make shardkit expand, recurse or read past what
// it holds (YAML aliases, long numbers, TOML characters toml++ mishandles); each is a ConfigError
// naming the file and the place.
#include <catch2/catch.hpp>

#include <string>

#include "config_files.hpp"

using shardkit::ConfigError;
using shardkit::load_config_file;

namespace {

std::string error_of(const std::string& name, const std::string& text) {
  const TempFile file(name, text);
  try {
    load_config_file(file.path());
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("YAML aliases cannot expand a small file without end", "[config][yaml][limits]") {
  // Each level names the one before three times: 3^12 values from 13 lines.
  std::string laughs = "a0: &a0 {x: 1, y: 2}\n";
  for (int i = 1; i <= 12; ++i)
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " {p: *a" + std::to_string(i - 1) + ", q: *a" +
              std::to_string(i - 1) + ", r: *a" + std::to_string(i - 1) + "}\n";
  const auto error = error_of("laughs.yaml", laughs);
  CHECK_THAT(error, Catch::Contains("laughs.yaml: the document expands to more values than it has characters"));
  // A mapping that holds itself.
  CHECK_THAT(error_of("self.yaml", "b: &b\n  lr: 1\n  c: *b\n"), Catch::Contains("nested more than 32 deep"));
  // Anchors used as a real file uses them stay fine.
  const TempFile fine("fine.yaml", "base: &b\n  lr: 0.001\nrun:\n  opt: *b\n");
  const auto raw = load_config_file(fine.path());
  CHECK(std::get<double>(raw.at("run.opt.lr").value) == 0.001);
}

TEST_CASE("YAML numbers too long or too large for their type stay text", "[config][yaml][limits]") {
  const TempFile file("numbers.yaml", "steps: " + std::string(100000, '9') + "\nlr: 1e999\nmomentum: -.5e-3\n");
  const auto raw = load_config_file(file.path());
  CHECK(std::get<std::string>(raw.at("steps").value) == std::string(100000, '9'));  // the option reports the range
  CHECK(std::get<std::string>(raw.at("lr").value) == "1e999");
  CHECK(std::get<double>(raw.at("momentum").value) == -0.5e-3);
}

TEST_CASE("TOML: characters outside ASCII only inside strings and comments", "[config][toml][limits]") {
  CHECK_THAT(error_of("bare.toml", "steps = 1\nnamé = 2\n"),
             Catch::Contains("bare.toml:2:4: TOML syntax error: a character outside ASCII outside a string or a comment"));
  // After a syntax error toml++ would classify them as whitespace: the syntax error is reported.
  CHECK_THAT(error_of("broken.toml", "steps = 655_\njob = \"é\"\n"), Catch::Contains("broken.toml:1:"));
  const TempFile fine("fine.toml", "# réglages\njob_name = \"café ☕\"\n\"clé\" = 'ß'\n");
  const auto raw = load_config_file(fine.path());
  CHECK(std::get<std::string>(raw.at("job_name").value) == "café ☕");
  CHECK(std::get<std::string>(raw.at("clé").value) == "ß");
}
