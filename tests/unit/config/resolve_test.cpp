// Tests for Schema and resolve(): defaults, type/range/choice checks, unknown and inactive keys.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "shardkit/config.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"

using shardkit::Config;
using shardkit::ConfigError;
using shardkit::OptionSpec;
using shardkit::OptionType;
using shardkit::parse_flags;
using shardkit::RawConfig;
using shardkit::RawValue;
using shardkit::Schema;
using shardkit::Value;

namespace {

const OptionSpec kCoreOptions[] = {
    {"steps", OptionType::Int, "100", "Loop steps", "1", nullptr, nullptr},
    {"resume", OptionType::Bool, "false", "Resume from --config_path", nullptr, nullptr, nullptr},
    {"optimizer.lr", OptionType::Float, "0.001", "Learning rate", "0", "10", nullptr},
    {"scheduler.type", OptionType::String, "constant", "LR schedule", nullptr, nullptr,
     "constant|cosine"},
    {"policy.type", OptionType::String, "mlp", "Policy plugin", nullptr, nullptr, "mlp|act"},
    {"output_dir", OptionType::String, "outputs", "Where to write", nullptr, nullptr, nullptr},
    {"seed", OptionType::Int, "", "Random seed (unset: random)", nullptr, nullptr, nullptr},
};

const OptionSpec kMlpOptions[] = {
    {"hidden_dim", OptionType::Int, "64", "Width of each block", "1", nullptr, nullptr},
};

const OptionSpec kActOptions[] = {
    {"chunk_size", OptionType::Int, "100", "Action chunk", "1", nullptr, nullptr},
    {"hidden_dim", OptionType::Int, "512", "Width", "1", nullptr, nullptr},
};

Schema make_schema() {
  Schema schema;
  schema.add("", kCoreOptions, std::size(kCoreOptions), "core");
  schema.add("policy.", kMlpOptions, std::size(kMlpOptions), "policy 'mlp'");
  schema.add_inactive("policy.", kActOptions, std::size(kActOptions), "policy 'act'",
                      "policy.type=mlp");
  schema.allow_extra("plugins");
  return schema;
}

std::string resolve_error(const RawConfig& file, const RawConfig& flags) {
  try {
    shardkit::resolve(make_schema(), file, flags);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string flag_error(const std::vector<std::string>& args) {
  return resolve_error({}, parse_flags(args));
}

RawConfig file_values(const std::string& key, Value value) {
  return {{key, RawValue{std::move(value), "cfg.toml:3:7"}}};
}

}  // namespace

TEST_CASE("resolve fills defaults for every option", "[config][resolve]") {
  const Config config = shardkit::resolve(make_schema(), {}, {});
  CHECK(config.get_int("steps") == 100);
  CHECK(config.get_bool("resume") == false);
  CHECK(config.get_float("optimizer.lr") == 0.001);
  CHECK(config.get_string("scheduler.type") == "constant");
  CHECK(config.get_int("policy.hidden_dim") == 64);
  CHECK_FALSE(config.has("seed"));  // empty default of an int: unset
  CHECK_FALSE(config.has("policy.chunk_size"));
  CHECK_FALSE(config.has("plugins"));
}

TEST_CASE("flags are converted to the declared types", "[config][resolve]") {
  const Config config = shardkit::resolve(
      make_schema(), {},
      parse_flags({"--steps=+7", "--resume", "--optimizer.lr=3e-4", "--scheduler.type=cosine",
                   "--output_dir=a=b", "--seed=-5", "--policy.hidden_dim=128"}));
  CHECK(config.get_int("steps") == 7);
  CHECK(config.get_bool("resume") == true);
  CHECK(config.get_float("optimizer.lr") == 3e-4);
  CHECK(config.get_string("scheduler.type") == "cosine");
  CHECK(config.get_string("output_dir") == "a=b");
  CHECK(config.get_int("seed") == -5);
  CHECK(config.get_int("policy.hidden_dim") == 128);

  for (const auto& [text, expected] : std::vector<std::pair<std::string, bool>>{
           {"true", true}, {"TRUE", true}, {"1", true}, {"Yes", true},
           {"false", false}, {"False", false}, {"0", false}, {"no", false}}) {
    INFO(text);
    CHECK(shardkit::resolve(make_schema(), {}, parse_flags({"--resume=" + text}))
              .get_bool("resume") == expected);
  }
  CHECK(shardkit::resolve(make_schema(), {}, parse_flags({"--optimizer.lr=2"}))
            .get_float("optimizer.lr") == 2.0);
}

TEST_CASE("typed file values: int for float and string, nothing else crosses types",
          "[config][resolve]") {
  const Schema schema = make_schema();
  CHECK(shardkit::resolve(schema, file_values("optimizer.lr", Value{std::int64_t{1}}), {})
            .get("optimizer.lr") == Value{1.0});
  CHECK(shardkit::resolve(schema, file_values("output_dir", Value{std::int64_t{123}}), {})
            .get_string("output_dir") == "123");
  CHECK(shardkit::resolve(schema, file_values("steps", Value{std::string("12")}), {})
            .get_int("steps") == 12);

  CHECK_THAT(resolve_error(file_values("output_dir", Value{true}), {}),
             Catch::Contains("--output_dir=true (from cfg.toml:3:7): expected a string"));
  CHECK_THAT(resolve_error(file_values("output_dir", Value{1.5}), {}),
             Catch::Contains("expected a string"));
  CHECK_THAT(resolve_error(file_values("steps", Value{3.0}), {}),
             Catch::Contains("--steps=3.0 (from cfg.toml:3:7): expected an integer"));
  CHECK_THAT(resolve_error(file_values("resume", Value{std::int64_t{1}}), {}),
             Catch::Contains("--resume=1 (from cfg.toml:3:7): expected true or false"));
}

TEST_CASE("type errors name the flag, the value, the origin and what is allowed",
          "[config][resolve]") {
  CHECK(flag_error({"--steps=abc"}) == "--steps=abc (from command line): expected an integer");
  CHECK_THAT(flag_error({"--steps=3.5"}), Catch::Contains("--steps=3.5 (from command line): expected an integer"));
  CHECK_THAT(flag_error({"--steps="}), Catch::Contains("expected an integer"));
  CHECK_THAT(flag_error({"--steps= 3"}), Catch::Contains("expected an integer"));
  CHECK_THAT(flag_error({"--steps=99999999999999999999"}),
             Catch::Contains("--steps=99999999999999999999 (from command line): expected an integer between"));
  CHECK_THAT(flag_error({"--resume=maybe"}),
             Catch::Contains("--resume=maybe (from command line): expected true or false"));
  for (const std::string bad : {"abc", "1e-3x", "inf", "nan", "0x10", "", "1e999"}) {
    INFO(bad);
    CHECK_THAT(flag_error({"--optimizer.lr=" + bad}),
               Catch::Contains("--optimizer.lr=" + bad + " (from command line): expected a finite number"));
  }
}

TEST_CASE("range and choice errors say what is allowed", "[config][resolve]") {
  CHECK(flag_error({"--optimizer.lr=-1"}) ==
        "--optimizer.lr=-1 (from command line): must be >= 0");
  CHECK(flag_error({"--optimizer.lr=11"}) ==
        "--optimizer.lr=11 (from command line): must be <= 10");
  CHECK(flag_error({"--steps=0"}) == "--steps=0 (from command line): must be >= 1");
  CHECK(flag_error({"--scheduler.type=linear"}) ==
        "--scheduler.type=linear (from command line): must be one of: constant, cosine");
  // Bounds are inclusive.
  CHECK(shardkit::resolve(make_schema(), {}, parse_flags({"--optimizer.lr=0"}))
            .get_float("optimizer.lr") == 0.0);
  CHECK(shardkit::resolve(make_schema(), {}, parse_flags({"--optimizer.lr=10"}))
            .get_float("optimizer.lr") == 10.0);
}

TEST_CASE("unknown keys get suggestions", "[config][resolve]") {
  CHECK(flag_error({"--optimzer.lr=1"}) ==
        "unknown option --optimzer.lr (from command line); did you mean --optimizer.lr?");
  CHECK_THAT(resolve_error(file_values("stepz", Value{std::int64_t{1}}), {}),
             Catch::Contains("unknown option --stepz (from cfg.toml:3:7); did you mean --steps?"));
  CHECK_THAT(flag_error({"--lr=1"}), Catch::Contains("did you mean --optimizer.lr?"));
  CHECK_THAT(flag_error({"--plugin=a.so"}), Catch::Contains("did you mean --plugins?"));
  CHECK(flag_error({"--completely_unrelated_thing=1"}) ==
        "unknown option --completely_unrelated_thing (from command line); see --help for the "
        "accepted options");
}

TEST_CASE("options of a plugin that is not selected name its owner and the selector",
          "[config][resolve]") {
  CHECK(flag_error({"--policy.chunk_size=10"}) ==
        "--policy.chunk_size (from command line) is an option of policy 'act', but "
        "policy.type=mlp is selected; remove it or select that plugin");
  // A key both the selected and an unselected plugin declare belongs to the selected one.
  CHECK(shardkit::resolve(make_schema(), {}, parse_flags({"--policy.hidden_dim=9"}))
            .get_int("policy.hidden_dim") == 9);
}

TEST_CASE("all errors are reported together, one per line", "[config][resolve]") {
  const std::string message =
      resolve_error(file_values("optimzer.lr", Value{1.0}),
                    parse_flags({"--steps=abc", "--scheduler.type=linear",
                                 "--policy.chunk_size=3", "--resume=on"}));
  CHECK_THAT(message, Catch::StartsWith("5 configuration errors:\n"));
  CHECK(std::count(message.begin(), message.end(), '\n') == 5);
  CHECK_THAT(message, Catch::Contains("unknown option --optimzer.lr (from cfg.toml:3:7)"));
  CHECK_THAT(message, Catch::Contains("--steps=abc (from command line): expected an integer"));
  CHECK_THAT(message, Catch::Contains("--scheduler.type=linear"));
  CHECK_THAT(message, Catch::Contains("--policy.chunk_size"));
  CHECK_THAT(message, Catch::Contains("--resume=on"));
}

TEST_CASE("a valid flag overrides an invalid file value", "[config][resolve]") {
  const Config config = shardkit::resolve(
      make_schema(), file_values("steps", Value{std::string("abc")}), parse_flags({"--steps=4"}));
  CHECK(config.get_int("steps") == 4);
}

TEST_CASE("allow_extra keys take any value as a string", "[config][resolve]") {
  const Config from_flag = shardkit::resolve(make_schema(), {}, parse_flags({"--plugins=a.so,b.so"}));
  CHECK(from_flag.get_string("plugins") == "a.so,b.so");
  const Config from_file =
      shardkit::resolve(make_schema(), file_values("plugins", Value{std::int64_t{3}}), {});
  CHECK(from_file.get_string("plugins") == "3");
}

TEST_CASE("Schema::add puts plugin options under the prefix", "[config][schema]") {
  const Schema schema = make_schema();
  const auto* entry = schema.find("policy.hidden_dim");
  REQUIRE(entry != nullptr);
  CHECK(entry->owner == "policy 'mlp'");
  CHECK(entry->type == OptionType::Int);
  CHECK(entry->default_value == "64");
  REQUIRE(entry->min.has_value());
  CHECK(*entry->min == 1.0);
  CHECK_FALSE(entry->max.has_value());
  CHECK(schema.find("hidden_dim") == nullptr);
  CHECK(schema.find("policy.chunk_size") == nullptr);  // inactive
  const auto* choice = schema.find("scheduler.type");
  REQUIRE(choice != nullptr);
  CHECK(choice->choices == std::vector<std::string>{"constant", "cosine"});
}

TEST_CASE("Schema::add refuses duplicates and bad declarations", "[config][schema]") {
  Schema schema = make_schema();
  const std::size_t before = schema.entries().size();
  const OptionSpec dup[] = {
      {"fresh", OptionType::Int, "1", "", nullptr, nullptr, nullptr},
      {"hidden_dim", OptionType::Int, "1", "", nullptr, nullptr, nullptr},
  };
  try {
    schema.add("policy.", dup, 2, "policy 'other'");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--policy.hidden_dim"));
    CHECK_THAT(e.what(), Catch::Contains("policy 'mlp'"));
    CHECK_THAT(e.what(), Catch::Contains("policy 'other'"));
  }
  CHECK(schema.entries().size() == before);  // nothing half-added

  const OptionSpec same_twice[] = {
      {"x", OptionType::Int, "1", "", nullptr, nullptr, nullptr},
      {"x", OptionType::Int, "2", "", nullptr, nullptr, nullptr},
  };
  CHECK_THROWS_AS(Schema().add("", same_twice, 2, "core"), ConfigError);

  const OptionSpec bad_default[] = {{"n", OptionType::Int, "many", "", nullptr, nullptr, nullptr}};
  CHECK_THROWS_WITH(Schema().add("p.", bad_default, 1, "policy 'x'"),
                    Catch::Contains("--p.n") && Catch::Contains("policy 'x'") &&
                        Catch::Contains("'many'") && Catch::Contains("expected an integer"));
  const OptionSpec bad_choice[] = {{"m", OptionType::String, "c", "", nullptr, nullptr, "a|b"}};
  CHECK_THROWS_WITH(Schema().add("", bad_choice, 1, "core"), Catch::Contains("must be one of: a, b"));
  const OptionSpec bad_bound[] = {{"k", OptionType::Float, "1", "", "zero", nullptr, nullptr}};
  CHECK_THROWS_WITH(Schema().add("", bad_bound, 1, "core"), Catch::Contains("'zero'"));
}

TEST_CASE("help_text aligns options and groups them by owner", "[config][schema]") {
  const Schema schema = make_schema();
  const std::string mlp = schema.help_text("policy 'mlp'");
  CHECK(mlp == "policy 'mlp' options:\n"
               "  --policy.hidden_dim=<int>  Width of each block (default: 64) [1..]\n");
  const std::string all = schema.help_text();
  CHECK_THAT(all, Catch::StartsWith("core options:\n"
                                    "  --steps=<int>              Loop steps (default: 100) [1..]\n"));
  CHECK_THAT(all, Catch::Contains(
                      "  --scheduler.type=<string>  LR schedule (default: constant) [allowed: constant|cosine]\n"));
  CHECK_THAT(all, Catch::Contains("  --optimizer.lr=<float>     Learning rate (default: 0.001) [0..10]\n"));
  CHECK_THAT(all, Catch::Contains("  --seed=<int>               Random seed (unset: random) (no default)\n"));
  CHECK_THAT(all, Catch::Contains("\npolicy 'mlp' options:\n"));
  CHECK(schema.help_text("nobody").empty());
}

TEST_CASE("Config getters name the key on a missing or mistyped value", "[config][access]") {
  Config config;
  config.set("steps", Value{std::int64_t{5}});
  config.set("name", Value{std::string("x")});
  config.set("policy.hidden_dim", Value{std::int64_t{3}});
  config.set("policy.act.dim", Value{1.5});
  config.set("policyx", Value{true});
  CHECK(config.get_float("steps") == 5.0);  // ints are accepted as floats
  CHECK_THROWS_WITH(config.get_int("missing"), Catch::Contains("'missing'"));
  CHECK_THROWS_WITH(config.get_string("steps"), Catch::Contains("'steps'") && Catch::Contains("string"));
  CHECK_THROWS_WITH(config.get_bool("name"), Catch::Contains("'name'"));
  CHECK_THROWS_WITH(config.get_int("name"), Catch::Contains("'name'"));
  CHECK_THROWS_WITH(config.get_float("name"), Catch::Contains("'name'"));

  const Config policy = config.section("policy.");
  CHECK(policy.values().size() == 2);
  CHECK(policy.get_int("hidden_dim") == 3);
  CHECK(policy.get_float("act.dim") == 1.5);
  CHECK(config.section("policy").values().size() == 2);
  CHECK(config.section("policy.act.").values().size() == 1);
}

TEST_CASE("resolve_all returns every problem, the refused keys and each value's origin", "[config][resolve]") {
  const auto resolution = shardkit::resolve_all(make_schema(), file_values("optimizer.lr", Value{0.5}),
                                                parse_flags({"--steps=abc", "--scheduler.type=cosine"}));
  REQUIRE(resolution.errors.size() == 1);
  CHECK_THAT(resolution.errors.front(), Catch::Contains("--steps=abc (from command line): expected an integer"));
  CHECK(resolution.refused == std::set<std::string>{"steps"});
  // A refused value leaves the default in place, and says so.
  CHECK(resolution.config.get_int("steps") == 100);
  CHECK(resolution.origins.at("steps") == "default");
  CHECK(resolution.origins.at("optimizer.lr") == "cfg.toml:3:7");
  CHECK(resolution.config.get_float("optimizer.lr") == 0.5);
  CHECK(resolution.origins.at("scheduler.type") == "--scheduler.type");
  CHECK(resolution.origins.at("output_dir") == "default");
  CHECK(resolution.origins.count("seed") == 0);  // no default, not given: no value
  CHECK_THROWS_WITH(shardkit::throw_config_errors(resolution.errors), resolution.errors.front());
  CHECK_NOTHROW(shardkit::throw_config_errors({}));
}

TEST_CASE("an option may be spelled with '-' for '_', but not both ways at once", "[config][resolve]") {
  const auto one = shardkit::canonical_spellings(parse_flags({"--output-dir=x", "--policy.hidden-dim=3"}));
  CHECK(one.count("output_dir") == 1);
  CHECK(one.at("output_dir").origin == "--output-dir");  // errors still show what was typed
  const Config config = shardkit::resolve(make_schema(), {}, one);
  CHECK(config.get_string("output_dir") == "x");
  CHECK(config.get_int("policy.hidden_dim") == 3);

  std::string message;
  try {
    shardkit::canonical_spellings(parse_flags({"--output-dir=a", "--output_dir=b", "--steps=3"}));
  } catch (const ConfigError& e) {
    message = e.what();
  }
  CHECK(message ==
        "--output-dir=a (from command line) and --output_dir=b (from command line) are two spellings of "
        "the option --output_dir; give it once");
  // In a file, both spellings are named with their positions.
  const RawConfig file = {{"save-freq", RawValue{Value{std::int64_t{5}}, "run.toml:2:13"}},
                          {"save_freq", RawValue{Value{std::int64_t{10}}, "run.toml:3:13"}}};
  CHECK_THROWS_WITH(shardkit::canonical_spellings(file),
                    Catch::Contains("--save-freq=5 (from run.toml:2:13) and --save_freq=10 (from run.toml:3:13)"));
}

TEST_CASE("closest_names counts a swap of neighbours as one edit and is strict with short words",
          "[config][suggest]") {
  const std::vector<std::string> policies = {"act", "good", "llama", "mlp"};
  CHECK(shardkit::closest_names("mpl", policies) == std::vector<std::string>{"mlp"});
  CHECK(shardkit::closest_names("lama", policies) == std::vector<std::string>{"llama"});
  CHECK(shardkit::closest_names("foo", policies).empty());  // 2 edits of 3 letters is not a typo
  CHECK(shardkit::closest_names("ac", policies) == std::vector<std::string>{"act"});
}
