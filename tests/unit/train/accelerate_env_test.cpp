// LeRobot main's accelerate environment guard: a set variable (any value) stops the run, naming
// it and the flag to use, unless LEROBOT_ALLOW_ACCELERATE_ENV is set; then one warning.
#include "../../../apps/shardkit-train/src/accelerate_env.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "shardkit/error.hpp"

using Catch::Matchers::Contains;
using shardkit::train::accelerate_env_message;
using shardkit::train::check_accelerate_env;

namespace {

/// An environment holding exactly `variables`.
shardkit::train::EnvLookup environment(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace

TEST_CASE("a plain launch's environment passes the accelerate guard", "[train][accelerate_env]") {
  // What `accelerate launch` exports without a config file: none of the guarded variables.
  const auto env = environment({{"ACCELERATE_USE_CPU", "False"}, {"ACCELERATE_MIXED_PRECISION", "no"},
                                {"ACCELERATE_DYNAMO_BACKEND", "NO"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}});
  CHECK(accelerate_env_message(env).empty());
  CHECK(check_accelerate_env(env).empty());
}

TEST_CASE("each guarded variable stops the run, named with the flag to use, whatever its value",
          "[train][accelerate_env]") {
  const std::map<std::string, std::string> flag_of = {
      {"ACCELERATE_USE_FSDP", "--parallelism.dp_shard"},
      {"ACCELERATE_USE_PARALLELISM_CONFIG", "--parallelism.dp_replicate"},
      {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "--accelerator.gradient_accumulation.steps"}};
  for (const auto& [variable, flag] : flag_of) {
    for (const std::string value : {"true", "false", ""}) {
      INFO(variable << "=" << value);
      const auto env = environment({{variable, value}});
      try {
        check_accelerate_env(env);
        FAIL("the guard let " << variable << " through");
      } catch (const shardkit::ConfigError& e) {
        CHECK_THAT(e.what(), Contains(variable + "=" + value) && Contains(flag) &&
                                 Contains("LEROBOT_ALLOW_ACCELERATE_ENV=1"));
      }
    }
  }
}

TEST_CASE("all the set variables are named at once", "[train][accelerate_env]") {
  const auto message =
      accelerate_env_message(environment({{"ACCELERATE_USE_FSDP", "true"}, {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS", "4"}}));
  CHECK_THAT(message, Contains("ACCELERATE_GRADIENT_ACCUMULATION_STEPS=4, ACCELERATE_USE_FSDP=true"));
  CHECK_THAT(message, !Contains("ACCELERATE_USE_PARALLELISM_CONFIG"));
}

TEST_CASE("LEROBOT_ALLOW_ACCELERATE_ENV turns the refusal into a warning; empty does not",
          "[train][accelerate_env]") {
  const auto warning = check_accelerate_env(
      environment({{"ACCELERATE_USE_FSDP", "true"}, {"LEROBOT_ALLOW_ACCELERATE_ENV", "1"}}));
  CHECK_THAT(warning, Contains("ACCELERATE_USE_FSDP=true") && Contains("going on"));
  CHECK_THROWS_AS(check_accelerate_env(environment({{"ACCELERATE_USE_FSDP", "true"}, {"LEROBOT_ALLOW_ACCELERATE_ENV", ""}})),
                  shardkit::ConfigError);
}
