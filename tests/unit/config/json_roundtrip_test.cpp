// Tests for Config::to_json() and Config::from_json_text(): format, escaping and exact round trips.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

using shardkit::Config;
using shardkit::ConfigError;
using shardkit::OptionSpec;
using shardkit::OptionType;
using shardkit::Schema;
using shardkit::Value;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// Every typed value survives to_json() -> from_json_text() with the same type and bits.
void check_round_trip(const Config& config) {
  const auto raw = Config::from_json_text(config.to_json(), "train_config.json");
  REQUIRE(raw.size() == config.values().size());
  for (const auto& [key, value] : config.values()) {
    INFO(key << " = " << shardkit::to_string(value));
    const auto it = raw.find(key);
    REQUIRE(it != raw.end());
    REQUIRE(it->second.value.index() == value.index());
    if (const auto* d = std::get_if<double>(&value)) {
      CHECK(same_bits(std::get<double>(it->second.value), *d));
    } else {
      CHECK(it->second.value == value);
    }
    CHECK_THAT(it->second.origin, Catch::Matches("train_config\\.json:[0-9]+:[0-9]+"));
  }
}

}  // namespace

TEST_CASE("to_json writes nested, sorted, 2-space indented JSON", "[config][json]") {
  Config config;
  config.set("steps", Value{std::int64_t{100}});
  config.set("policy.type", Value{std::string("mlp")});
  config.set("policy.hidden_dim", Value{std::int64_t{64}});
  config.set("optimizer.lr", Value{1.0});
  config.set("resume", Value{false});
  config.set("a-b", Value{0.1});
  CHECK(config.to_json() ==
        "{\n"
        "  \"a-b\": 0.1,\n"
        "  \"optimizer\": {\n"
        "    \"lr\": 1.0\n"
        "  },\n"
        "  \"policy\": {\n"
        "    \"hidden_dim\": 64,\n"
        "    \"type\": \"mlp\"\n"
        "  },\n"
        "  \"resume\": false,\n"
        "  \"steps\": 100\n"
        "}\n");
  CHECK(Config().to_json() == "{}\n");
}

TEST_CASE("to_json escapes strings", "[config][json]") {
  Config config;
  config.set("s", Value{std::string("say \"hi\"\\ \n\t\x01 caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")});
  CHECK(config.to_json() ==
        "{\n  \"s\": \"say \\\"hi\\\"\\\\ \\n\\t\\u0001 caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\n}\n");
}

TEST_CASE("awkward doubles and strings round-trip exactly", "[config][json]") {
  Config config;
  const std::vector<double> doubles = {0.1,
                                       1e-300,
                                       3e-4,
                                       1.0,
                                       -0.0,
                                       0.0,
                                       1e-05,
                                       1e22,
                                       123456789.0,
                                       0.30000000000000004,
                                       2.2250738585072014e-308,
                                       4.9406564584124654e-324,
                                       std::numeric_limits<double>::max(),
                                       -std::numeric_limits<double>::max(),
                                       1.3927926388013963e-143,
                                       5.409760742964738e+124};
  for (std::size_t i = 0; i < doubles.size(); ++i) {
    config.set("d.v" + std::to_string(i), Value{doubles[i]});
  }
  config.set("i.max", Value{std::numeric_limits<std::int64_t>::max()});
  config.set("i.min", Value{std::numeric_limits<std::int64_t>::min()});
  config.set("i.zero", Value{std::int64_t{0}});
  config.set("b.t", Value{true});
  config.set("b.f", Value{false});
  config.set("s.quotes", Value{std::string("a \"quoted\" 'word'")});
  config.set("s.backslash", Value{std::string("C:\\path\\to\\file\\")});
  config.set("s.unicode", Value{std::string("\xCF\x80 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80")});
  config.set("s.control", Value{std::string("line1\nline2\r\t\b\f\x1f end")});
  config.set("s.empty", Value{std::string()});
  config.set("s.numberlike", Value{std::string("1.0")});
  config.set("weird key\"x", Value{std::string("v")});
  check_round_trip(config);
}

TEST_CASE("random doubles round-trip bit for bit", "[config][json]") {
  std::mt19937_64 random(12345);
  Config config;
  for (int i = 0; i < 5000; ++i) {
    std::uint64_t bits = random();
    double d = 0;
    std::memcpy(&d, &bits, sizeof(d));
    if (!std::isfinite(d)) continue;
    config.set("r" + std::to_string(i), Value{d});
  }
  check_round_trip(config);
}

TEST_CASE("a resolved config resolves to itself from its JSON", "[config][json][resolve]") {
  static const OptionSpec kOptions[] = {
      {"steps", OptionType::Int, "100", "", "1", nullptr, nullptr},
      {"optimizer.lr", OptionType::Float, "0.1", "", "0", nullptr, nullptr},
      {"optimizer.weight_decay", OptionType::Float, "1", "", nullptr, nullptr, nullptr},
      {"resume", OptionType::Bool, "false", "", nullptr, nullptr, nullptr},
      {"name", OptionType::String, "run", "", nullptr, nullptr, nullptr},
  };
  Schema schema;
  schema.add("", kOptions, std::size(kOptions), "core");
  schema.allow_extra("plugins");
  const Config first = shardkit::resolve(
      schema, {},
      shardkit::parse_flags({"--optimizer.lr=3e-4", "--name=\"q\" \\ \xC3\xA9",
                             "--plugins=a.so,b.so", "--resume"}));
  const Config second =
      shardkit::resolve(schema, Config::from_json_text(first.to_json(), "train_config.json"), {});
  CHECK(second.values() == first.values());
  CHECK(second.to_json() == first.to_json());
  CHECK(same_bits(second.get_float("optimizer.lr"), 3e-4));
  CHECK(std::holds_alternative<double>(second.get("optimizer.weight_decay")));
}

TEST_CASE("to_json refuses what JSON cannot hold", "[config][json]") {
  Config both;
  both.set("a", Value{std::int64_t{1}});
  both.set("a.b", Value{std::int64_t{2}});
  CHECK_THROWS_WITH(both.to_json(), Catch::Contains("'a'") && Catch::Contains("a.b"));

  Config nan;
  nan.set("x", Value{std::nan("")});
  CHECK_THROWS_WITH(nan.to_json(), Catch::Contains("'x'"));

  Config bad_utf8;
  bad_utf8.set("s", Value{std::string("\xC3(")});
  CHECK_THROWS_WITH(bad_utf8.to_json(), Catch::Contains("'s'") && Catch::Contains("UTF-8"));

  Config empty_part;
  empty_part.set("a..b", Value{true});
  CHECK_THROWS_AS(empty_part.to_json(), ConfigError);
}

TEST_CASE("from_json_text reports syntax errors with line and column", "[config][json]") {
  CHECK_THROWS_WITH(Config::from_json_text("{\n  \"a\": 1\n  \"b\": 2\n}", "ckpt/train_config.json"),
                    Catch::StartsWith("ckpt/train_config.json:3:3: JSON syntax error: unexpected '\"'"));
  CHECK_THROWS_WITH(Config::from_json_text("", "x.json"), Catch::StartsWith("x.json:1:1:"));
  CHECK_THROWS_WITH(Config::from_json_text("{\"a\": 1} extra", "x.json"),
                    Catch::StartsWith("x.json:1:10: JSON syntax error"));
}
