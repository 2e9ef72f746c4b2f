// Tests for parse_flags(), to_string(Value) and edit_distance().
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

using shardkit::ConfigError;
using shardkit::parse_flags;
using shardkit::Value;

namespace {

std::string flag_error(const std::vector<std::string>& args) {
  try {
    parse_flags(args);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("parse_flags reads --key=value and bare --key", "[config][flags]") {
  const auto flags = parse_flags(
      {"--steps=3", "--policy.type=act", "--expr=a=b=c", "--resume", "--empty=", "--dash-key=x"});
  REQUIRE(flags.size() == 6);
  CHECK(std::get<std::string>(flags.at("steps").value) == "3");
  CHECK(flags.at("steps").origin == "--steps");
  CHECK(std::get<std::string>(flags.at("policy.type").value) == "act");
  CHECK(flags.at("policy.type").origin == "--policy.type");
  CHECK(std::get<std::string>(flags.at("expr").value) == "a=b=c");
  CHECK(std::get<std::string>(flags.at("resume").value) == "true");
  CHECK(std::get<std::string>(flags.at("empty").value).empty());
  CHECK(flags.count("dash-key") == 1);
}

TEST_CASE("parse_flags reads --key value as argparse does, negative numbers included", "[config][flags]") {
  const auto flags = parse_flags({"--steps", "10", "--optimizer.lr", "-1e-3", "--resume", "--policy.type", "act",
                                  "--save_checkpoint"});
  REQUIRE(flags.size() == 5);
  CHECK(std::get<std::string>(flags.at("steps").value) == "10");
  CHECK(std::get<std::string>(flags.at("optimizer.lr").value) == "-1e-3");
  CHECK(std::get<std::string>(flags.at("resume").value) == "true");  // followed by an option: bare
  CHECK(std::get<std::string>(flags.at("policy.type").value) == "act");
  CHECK(std::get<std::string>(flags.at("save_checkpoint").value) == "true");  // last: bare
  // A single-dash word is not a value: it stays refused.
  CHECK_THAT(flag_error({"--steps", "-x"}), Catch::Contains("'-x'"));
}

TEST_CASE("parse_flags keeps the last of a repeated flag", "[config][flags]") {
  const auto flags = parse_flags({"--steps=3", "--batch_size=2", "--steps=7"});
  REQUIRE(flags.size() == 2);
  CHECK(std::get<std::string>(flags.at("steps").value) == "7");
}

TEST_CASE("parse_flags accepts no arguments", "[config][flags]") {
  CHECK(parse_flags({}).empty());
}

TEST_CASE("parse_flags refuses malformed arguments, naming them and the right form",
          "[config][flags]") {
  const std::string missing_dashes = flag_error({"--steps=1", "steps=3"});
  CHECK_THAT(missing_dashes, Catch::Contains("'steps=3'"));
  CHECK_THAT(missing_dashes, Catch::Contains("--key=value"));
  CHECK_THAT(missing_dashes, Catch::Contains("--steps=3"));

  const std::string single_dash = flag_error({"-x"});
  CHECK_THAT(single_dash, Catch::Contains("'-x'"));
  CHECK_THAT(single_dash, Catch::Contains("--key=value"));

  const std::string positional = flag_error({"train"});
  CHECK_THAT(positional, Catch::Contains("'train'"));
  CHECK_THAT(positional, Catch::Contains("positional"));

  for (const std::string bad : {"--", "--=3", "---x", "--a..b=1", "--.a=1", "--a.=1", "--a b=1"}) {
    INFO(bad);
    const std::string message = flag_error({bad});
    CHECK_THAT(message, Catch::Contains("'" + bad + "'"));
    CHECK_THAT(message, Catch::Contains("--key=value"));
  }
}

TEST_CASE("to_string writes values as a flag would carry them", "[config][value]") {
  CHECK(shardkit::to_string(Value{true}) == "true");
  CHECK(shardkit::to_string(Value{false}) == "false");
  CHECK(shardkit::to_string(Value{std::int64_t{42}}) == "42");
  CHECK(shardkit::to_string(Value{std::int64_t{-7}}) == "-7");
  CHECK(shardkit::to_string(Value{std::string("mlp")}) == "mlp");
  CHECK(shardkit::to_string(Value{std::string("")}).empty());
  // Doubles: shortest text, always recognisable as a float.
  CHECK(shardkit::to_string(Value{1.0}) == "1.0");
  CHECK(shardkit::to_string(Value{100.0}) == "100.0");
  CHECK(shardkit::to_string(Value{-2.0}) == "-2.0");
  CHECK(shardkit::to_string(Value{0.1}) == "0.1");
  CHECK(shardkit::to_string(Value{3e-4}) == "3e-04");
  CHECK(shardkit::to_string(Value{0.001}) == "0.001");
  CHECK(shardkit::to_string(Value{1e-05}) == "1e-05");
  CHECK(shardkit::to_string(Value{1e-300}) == "1e-300");
  CHECK(shardkit::to_string(Value{1e22}) == "1e+22");
}

TEST_CASE("edit_distance is the Levenshtein distance", "[config][suggest]") {
  CHECK(shardkit::edit_distance("", "") == 0);
  CHECK(shardkit::edit_distance("", "abc") == 3);
  CHECK(shardkit::edit_distance("abc", "") == 3);
  CHECK(shardkit::edit_distance("same", "same") == 0);
  CHECK(shardkit::edit_distance("kitten", "sitting") == 3);
  CHECK(shardkit::edit_distance("flaw", "lawn") == 2);
  CHECK(shardkit::edit_distance("optimzer.lr", "optimizer.lr") == 1);
  CHECK(shardkit::edit_distance("ab", "ba") == 2);
}
