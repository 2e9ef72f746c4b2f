// Registry::create(): plugin objects, their lifetime beyond the registry, unknown names, failing factories.
#include <catch2/catch.hpp>

#include "../../fixtures/fixture_api.hpp"
#include "plugin_test_util.hpp"

using Catch::Matchers::Contains;
using shardkit::ConfigError;
using shardkit::PluginContext;
using shardkit::PluginError;
using shardkit::Registry;
using shardkit::fixture::Greeter;
using shardkit::test::fixture;

namespace {

/// A Plugin type no fixture makes.
class NotAGreeter : public shardkit::Plugin {};

}  // namespace

TEST_CASE("create() makes the good plugin's object, which runs plugin code", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("good"));
  auto object = registry.create("policy", "good", PluginContext{});
  REQUIRE(object != nullptr);
  auto greeter = std::dynamic_pointer_cast<Greeter>(object);
  REQUIRE(greeter != nullptr);
  CHECK(greeter->greet() == "hello from good");
  CHECK(registry.create_as<Greeter>("policy", "good", PluginContext{})->greet() ==
        "hello from good");
}

TEST_CASE("an object keeps working after its registry is gone", "[plugin][create]") {
  std::shared_ptr<Greeter> greeter;
  {
    Registry registry;
    registry.load_file(fixture("good"));
    registry.load_file(fixture("twin_a"));
    greeter = registry.create_as<Greeter>("policy", "good", PluginContext{});
  }
  REQUIRE(greeter != nullptr);
  CHECK(greeter->greet() == "hello from good");
  greeter.reset();  // releases the object, then the library handle it held
  CHECK(greeter == nullptr);
}

TEST_CASE("create_as<T>() refuses an object of another type", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("good"));
  CHECK_THROWS_AS(registry.create_as<NotAGreeter>("policy", "good", PluginContext{}), PluginError);
  CHECK_THROWS_WITH(registry.create_as<NotAGreeter>("policy", "good", PluginContext{}),
                    Contains("policy 'good'") && Contains("libshardkit-policy-good.so"));
}

TEST_CASE("an unknown name lists the available ones", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("throws"));
  registry.load_file(fixture("good"));
  CHECK(registry.find("policy", "foo") == nullptr);
  CHECK_THROWS_AS(registry.get("policy", "foo"), ConfigError);
  CHECK_THROWS_WITH(registry.get("policy", "foo"), "unknown policy 'foo'; available: good, throws");
  CHECK_THROWS_WITH(registry.create("policy", "foo", PluginContext{}),
                    "unknown policy 'foo'; available: good, throws");
  CHECK_THROWS_WITH(registry.get("backend", "ddp"),
                    Contains("unknown backend 'ddp'; available: none"));
}

TEST_CASE("a mistyped plugin name gets a did-you-mean over the plugins of that kind", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("throws"));
  registry.load_file(fixture("good"));
  CHECK_THROWS_WITH(registry.get("policy", "godo"),
                    "unknown policy 'godo'; did you mean 'good'? available: good, throws");
  CHECK_THROWS_WITH(registry.get("policy", "throw"),
                    "unknown policy 'throw'; did you mean 'throws'? available: good, throws");
  // A plugin of another kind is not suggested.
  CHECK_THROWS_WITH(registry.get("dataset", "good"), Contains("unknown dataset 'good'; available: none"));
}

TEST_CASE("a throwing factory gives a RuntimeError naming the plugin", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("throws"));
  // A failure while starting (exit 1), not a plugin the loader refused (PluginError, exit 2).
  CHECK_THROWS_AS(registry.create("policy", "throws", PluginContext{}), shardkit::RuntimeError);
  CHECK_THROWS_WITH(registry.create("policy", "throws", PluginContext{}),
                    Contains("policy 'throws' failed to start: the throws fixture refuses to start"));
}

TEST_CASE("a shardkit error from a factory passes through unchanged", "[plugin][create]") {
  Registry registry;
  registry.load_file(fixture("throws"));
  PluginContext context;
  context.features["throw_config_error"] = {};
  try {
    registry.create("policy", "throws", context);
    FAIL("the factory's error was swallowed");
  } catch (const PluginError&) {
    FAIL("a shardkit error was wrapped into a PluginError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "--policy.fixture=bad is not allowed by the throws fixture");
  }
}

TEST_CASE("a plugin whose descriptor lists a capability its object lacks is refused at creation",
          "[plugin][create][capability]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("false_capability"));
  REQUIRE(loaded.descriptor->num_capabilities == 1);
  CHECK_THROWS_AS(registry.create("policy", "false_capability", PluginContext{}), PluginError);
  CHECK_THROWS_WITH(registry.create("policy", "false_capability", PluginContext{}),
                    Contains("policy 'false_capability' lists capability causal_lm/1 in its descriptor, but its "
                             "object does not offer it"));
}
