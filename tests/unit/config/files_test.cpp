// Tests for load_config_file(): TOML and JSON files (YAML in yaml_test.cpp), flattening, and syntax errors with positions.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "config_files.hpp"

using shardkit::ConfigError;
using shardkit::load_config_file;


TEST_CASE("a TOML file flattens into typed dotted keys with positions", "[config][file]") {
  const TempFile file("train.toml",
                      "steps = 100\n"
                      "resume = true\n"
                      "plugins = [\"a.so\", \"b.so\"]\n"
                      "\n"
                      "[optimizer]\n"
                      "lr = 1e-3\n"
                      "name = \"adamw\"\n"
                      "\n"
                      "[accelerator.fsdp]\n"
                      "min_num_params = 1000\n");
  const auto raw = load_config_file(file.path());
  REQUIRE(raw.size() == 6);
  CHECK(std::get<std::int64_t>(raw.at("steps").value) == 100);
  CHECK(std::get<bool>(raw.at("resume").value) == true);
  CHECK(std::get<std::string>(raw.at("plugins").value) == "a.so,b.so");
  CHECK(std::get<double>(raw.at("optimizer.lr").value) == 1e-3);
  CHECK(std::get<std::string>(raw.at("optimizer.name").value) == "adamw");
  CHECK(std::get<std::int64_t>(raw.at("accelerator.fsdp.min_num_params").value) == 1000);
  CHECK(raw.at("steps").origin == file.path() + ":1:9");
  CHECK(raw.at("optimizer.lr").origin == file.path() + ":6:6");
}

TEST_CASE("a JSON file flattens into typed dotted keys", "[config][file]") {
  const TempFile file("train.json", R"({
  "steps": 100,
  "resume": false,
  "plugins": ["a.so", "b.so"],
  "optimizer": {"lr": 1e-3, "betas": {"b1": 0.9}},
  "policy.type": "act",
  "empty": [],
  "one": 1.0
})");
  const auto raw = load_config_file(file.path());
  REQUIRE(raw.size() == 8);
  CHECK(std::get<std::int64_t>(raw.at("steps").value) == 100);
  CHECK(std::get<bool>(raw.at("resume").value) == false);
  CHECK(std::get<std::string>(raw.at("plugins").value) == "a.so,b.so");
  CHECK(std::get<double>(raw.at("optimizer.lr").value) == 1e-3);
  CHECK(std::get<double>(raw.at("optimizer.betas.b1").value) == 0.9);
  CHECK(std::get<std::string>(raw.at("policy.type").value) == "act");
  CHECK(std::get<std::string>(raw.at("empty").value).empty());
  CHECK(std::get<double>(raw.at("one").value) == 1.0);  // 1.0 stays a float
  // Each value's origin is the line and column where the value starts.
  CHECK(raw.at("steps").origin == file.path() + ":2:12");
  CHECK(raw.at("plugins").origin == file.path() + ":4:14");
  CHECK(raw.at("optimizer.lr").origin == file.path() + ":5:23");
  CHECK(raw.at("optimizer.betas.b1").origin == file.path() + ":5:45");
  CHECK(raw.at("empty").origin == file.path() + ":7:12");
}

TEST_CASE("JSON positions are right after strings holding quotes, commas and brackets", "[config][file]") {
  const TempFile file("tricky.json", "{\"a\": \"x,]}\\\"\", \"b\": [\"[\", \"]\"], \"c\": true}");
  const auto raw = load_config_file(file.path());
  REQUIRE(raw.size() == 3);
  CHECK(std::get<std::string>(raw.at("a").value) == "x,]}\"");
  CHECK(raw.at("a").origin == file.path() + ":1:7");
  CHECK(std::get<std::string>(raw.at("b").value) == "[,]");
  CHECK(raw.at("b").origin == file.path() + ":1:22");
  CHECK(raw.at("c").origin == file.path() + ":1:39");
}

TEST_CASE("a JSON value of the wrong type is reported at its line and column", "[config][file]") {
  const TempFile file("run.json", "{\n  \"steps\": \"ten\",\n  \"optimizer\": {\"lr\": true}\n}\n");
  static const shardkit::OptionSpec kOptions[] = {
      {"steps", shardkit::OptionType::Int, "100", "Loop steps", "1", nullptr, nullptr},
      {"optimizer.lr", shardkit::OptionType::Float, "0.001", "Learning rate", "0", nullptr, nullptr},
  };
  shardkit::Schema schema;
  schema.add("", kOptions, 2, "core");
  std::string message;
  try {
    shardkit::resolve(schema, load_config_file(file.path()), {});
  } catch (const ConfigError& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::StartsWith("2 configuration errors:"));
  CHECK_THAT(message, Catch::Contains("--optimizer.lr=true (from " + file.path() + ":3:23): expected a finite number"));
  CHECK_THAT(message, Catch::Contains("--steps=ten (from " + file.path() + ":2:12): expected an integer"));
}

TEST_CASE("the file's extension picks the parser; others are refused", "[config][file]") {
  const TempFile upper("CFG.TOML", "steps = 3\n");
  CHECK(load_config_file(upper.path()).size() == 1);

  const TempFile ini("train.ini", "steps = 3\n");
  const std::string message = load_error(ini.path());
  CHECK_THAT(message, Catch::Contains(ini.path()));
  CHECK_THAT(message, Catch::Contains("'.ini'"));
  CHECK_THAT(message, Catch::Contains(".toml, .json or .yaml"));
}

TEST_CASE("a missing file is an error naming it", "[config][file]") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            "shardkit-config-test-does-not-exist" / "train.toml")
                               .string();
  CHECK_THAT(load_error(path), Catch::Contains(path));
}

TEST_CASE("a TOML syntax error names the file, line and column", "[config][file]") {
  const TempFile file("bad.toml", "steps = 3\nlr = = 2\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::StartsWith(file.path() + ":2:"));
  CHECK_THAT(message, Catch::Contains("TOML"));
}

TEST_CASE("a JSON syntax error names the file, line and column", "[config][file]") {
  const TempFile file("bad.json", "{\n  \"a\": 1,\n  \"b\": tru\n}\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::StartsWith(file.path() + ":3:"));
  CHECK_THAT(message, Catch::Contains("JSON"));

  const TempFile truncated("cut.json", "{\"a\": {\"b\": 1}");
  CHECK_THAT(load_error(truncated.path()), Catch::StartsWith(truncated.path() + ":1:"));

  const TempFile column("col.json", "{\"a\": 1,, \"b\": 2}");
  CHECK_THAT(load_error(column.path()), Catch::StartsWith(column.path() + ":1:9:"));
}

TEST_CASE("arrays of anything but strings are errors naming the key", "[config][file]") {
  const TempFile toml("arr.toml", "[model]\nsizes = [1, 2]\n");
  const std::string toml_message = load_error(toml.path());
  CHECK_THAT(toml_message, Catch::Contains("model.sizes"));
  CHECK_THAT(toml_message, Catch::Contains(toml.path() + ":2:"));
  CHECK_THAT(toml_message, Catch::Contains("strings"));

  const TempFile json("arr.json", R"({"model": {"sizes": [1, 2]}})");
  CHECK_THAT(load_error(json.path()), Catch::Contains("model.sizes"));

  const TempFile nested("nested.json", R"({"x": [["a"]]})");
  CHECK_THAT(load_error(nested.path()), Catch::Contains("'x'"));
}

TEST_CASE("JSON values a config cannot hold are errors naming the key", "[config][file]") {
  const TempFile null_value("null.json", R"({"optimizer": {"lr": null}})");
  CHECK_THAT(load_error(null_value.path()), Catch::Contains("optimizer.lr"));

  const TempFile huge("huge.json", R"({"steps": 18446744073709551615})");
  CHECK_THAT(load_error(huge.path()), Catch::Contains("steps"));

  const TempFile not_object("list.json", R"(["a"])");
  CHECK_THAT(load_error(not_object.path()), Catch::Contains("object"));

  const TempFile twice("twice.json", R"({"a": {"b": 1}, "a.b": 2})");
  CHECK_THAT(load_error(twice.path()), Catch::Contains("a.b"));
}

TEST_CASE("a TOML key reached twice through a quoted dotted key is an error", "[config][file]") {
  const TempFile file("twice.toml", "\"a.b\" = 1\n[a]\nb = 2\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::Contains("'a.b'"));
  CHECK_THAT(message, Catch::Contains("twice"));
}

TEST_CASE("TOML dates are refused with a hint", "[config][file]") {
  const TempFile file("date.toml", "when = 1979-05-27\n");
  const std::string message = load_error(file.path());
  CHECK_THAT(message, Catch::Contains("when"));
  CHECK_THAT(message, Catch::Contains("string"));
}

TEST_CASE("file values are validated and flags override them", "[config][file][resolve]") {
  static const shardkit::OptionSpec kOptions[] = {
      {"steps", shardkit::OptionType::Int, "10", "Loop steps", "1", nullptr, nullptr},
      {"optimizer.lr", shardkit::OptionType::Float, "0.1", "Learning rate", "0", nullptr, nullptr},
      {"name", shardkit::OptionType::String, "run", "Run name", nullptr, nullptr, nullptr},
  };
  shardkit::Schema schema;
  schema.add("", kOptions, 3, "core");
  const TempFile file("train.toml", "steps = 50\nname = \"from-file\"\n[optimizer]\nlr = 3e-4\n");
  const auto config = shardkit::resolve(schema, load_config_file(file.path()),
                                        shardkit::parse_flags({"--steps=7"}));
  CHECK(config.get_int("steps") == 7);
  CHECK(config.get_float("optimizer.lr") == 3e-4);
  CHECK(config.get_string("name") == "from-file");

  const TempFile bad("bad.toml", "steps = 0\n");
  try {
    shardkit::resolve(schema, load_config_file(bad.path()), {});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--steps=0 (from " + bad.path() + ":1:9): must be >= 1"));
  }
}
