// A plugin's hooks (aliases, configuration layer, check) reach the host through the registry's entry.
#include <catch2/catch.hpp>

#include "plugin_test_util.hpp"

using shardkit::test::fixture;

TEST_CASE("SHARDKIT_PLUGIN_WITH_HOOKS: the registry hands out the plugin's aliases and hooks", "[plugin][hooks]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("hooked"));
  CHECK(loaded.aliases == std::vector<std::string>{"hooked_alias"});
  CHECK(registry.canonical_name("policy", "hooked_alias") == "hooked");
  CHECK(loaded.descriptor->num_capabilities == 0);
  REQUIRE(loaded.config_layer != nullptr);
  REQUIRE(loaded.config_check != nullptr);

  // The layer adds to the file's values under its prefix and leaves a value a flag gave alone.
  shardkit::RawConfig flags, file;
  std::vector<std::string> warnings;
  loaded.config_layer(shardkit::ConfigLayerRequest{"policy.", &flags, &file, &warnings});
  REQUIRE(file.count("policy.from_layer") == 1);
  CHECK(shardkit::to_string(file.at("policy.from_layer").value) == "layered");
  CHECK(file.at("policy.from_layer").origin == "the hooked fixture");
  CHECK(warnings == std::vector<std::string>{"hooked set policy.from_layer"});
  shardkit::RawConfig given{{"policy.from_layer", shardkit::RawValue{std::string("mine"), "--policy.from_layer"}}};
  shardkit::RawConfig untouched;
  loaded.config_layer(shardkit::ConfigLayerRequest{"policy.", &given, &untouched, &warnings});
  CHECK(untouched.empty());
  CHECK(warnings.size() == 1);

  // The check adds its findings to the list it is handed.
  std::vector<std::string> errors{"an earlier error"};
  const std::set<std::string> refused;
  loaded.config_check(shardkit::ConfigCheckRequest{"policy.", nullptr, &refused, 3, &errors});
  CHECK(errors == std::vector<std::string>{"an earlier error", "hooked checked policy. on 3 processes"});
}

TEST_CASE("a plugin declared without hooks has none", "[plugin][hooks]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("good"));
  CHECK(loaded.aliases.empty());
  CHECK(loaded.config_layer == nullptr);
  CHECK(loaded.config_check == nullptr);
}
