// Registry loading rules: the same file once, duplicate names, explicit files winning, discovery.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "plugin_test_util.hpp"
#include "test_support.hpp"

using Catch::Matchers::Contains;
using shardkit::ConfigError;
using shardkit::PluginError;
using shardkit::Registry;
using shardkit::test::canonical_fixture;
using shardkit::test::copy_fixtures;
using shardkit::test::fixture;
using shardkit::test::isolated_search;
using shardkit::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("loading the same file twice returns the existing entry", "[plugin][registry]") {
  Registry registry;
  const auto& first = registry.load_file(fixture("good"));
  // Another spelling of the same file is the same library.
  const std::string other_spelling =
      std::string(SHARDKIT_FIXTURE_DIR) + "/./libshardkit-policy-good.so";
  const auto& second = registry.load_file(other_spelling);
  CHECK(&first == &second);
  CHECK(registry.all().size() == 1);
  // Naming it explicitly later marks the same entry explicit.
  const auto& third = registry.load_file(fixture("good"), true);
  CHECK(&third == &first);
  CHECK(third.explicit_file);
}

TEST_CASE("two files with the same kind and name are an error naming both",
          "[plugin][registry]") {
  for (const bool explicit_both : {false, true}) {
    INFO("both explicit: " << explicit_both);
    Registry registry;
    registry.load_file(fixture("twin_a"), explicit_both);
    try {
      registry.load_file(fixture("twin_b"), explicit_both);
      FAIL("a duplicate (kind, name) was accepted");
    } catch (const PluginError& e) {
      CHECK_THAT(e.what(), Contains("policy 'twin'"));
      CHECK_THAT(e.what(), Contains(canonical_fixture("twin_a")));
      CHECK_THAT(e.what(), Contains(canonical_fixture("twin_b")));
    }
    CHECK(registry.get("policy", "twin").file == canonical_fixture("twin_a"));
  }
}

TEST_CASE("an explicit file replaces a directory-found one with a notice", "[plugin][registry]") {
  shardkit::test::LogCapture log;
  Registry registry;
  registry.load_file(fixture("twin_a"), false);
  const auto& winner = registry.load_file(fixture("twin_b"), true);
  CHECK(winner.file == canonical_fixture("twin_b"));
  CHECK(registry.get("policy", "twin").file == canonical_fixture("twin_b"));
  CHECK(registry.all().size() == 1);
  CHECK_THAT(log.text(), Contains(canonical_fixture("twin_a")));
  CHECK_THAT(log.text(), Contains(canonical_fixture("twin_b")));
  CHECK_THAT(log.text(), Contains("--plugins"));
}

TEST_CASE("discover: --plugins wins over the same name found in a directory",
          "[plugin][registry]") {
  TempDir dir("shardkit-plugin-test");
  copy_fixtures(dir.path(), {"twin_a", "good"});
  shardkit::test::LogCapture log;
  Registry registry;
  auto search = isolated_search();
  search.explicit_files = {fixture("twin_b")};
  search.dirs = {dir.path()};
  registry.discover(search);
  CHECK(registry.get("policy", "twin").file == canonical_fixture("twin_b"));
  CHECK(registry.get("policy", "twin").explicit_file);
  CHECK(registry.names("policy") == std::vector<std::string>{"good", "twin"});
  const std::string shadowed = fs::canonical(dir / "libshardkit-policy-twin_a.so").string();
  REQUIRE(registry.refused().size() == 1);
  CHECK(registry.refused()[0].file == shadowed);
  CHECK_THAT(registry.refused()[0].reason, Contains(canonical_fixture("twin_b")));
  CHECK_THAT(log.text(), Contains(shadowed));
}

TEST_CASE("discover records broken files found in a directory and keeps going",
          "[plugin][registry]") {
  TempDir dir("shardkit-plugin-test");
  copy_fixtures(dir.path(), {"good", "bad_abi", "no_entry", "not_a_library"});
  std::ofstream(dir / "README.txt") << "not a plugin name: ignored\n";
  fs::copy_file(fixture("bad_torch"), dir / "libother-policy.so");  // pattern mismatch: ignored
  shardkit::test::LogCapture log;
  Registry registry;
  auto search = isolated_search();
  search.dirs = {dir.path()};
  REQUIRE_NOTHROW(registry.discover(search));
  CHECK(registry.names("policy") == std::vector<std::string>{"good"});
  REQUIRE(registry.refused().size() == 3);
  std::map<std::string, std::string> reasons;
  for (const auto& r : registry.refused()) reasons[fs::path(r.file).filename().string()] = r.reason;
  CHECK_THAT(reasons["libshardkit-policy-bad_abi.so"], Contains("incompatible plugin ABI version"));
  CHECK_THAT(reasons["libshardkit-policy-no_entry.so"], Contains("does not export"));
  CHECK_THAT(reasons["libshardkit-policy-not_a_library.so"], Contains("does not load"));
  CHECK_THAT(log.text(), Contains("libshardkit-policy-bad_abi.so"));
  // Scanning the same directory again neither duplicates refusals nor fails.
  registry.discover(search);
  CHECK(registry.refused().size() == 3);
  CHECK(registry.all().size() == 1);
}

TEST_CASE("discover: two directory files with the same name are ambiguous", "[plugin][registry]") {
  TempDir dir("shardkit-plugin-test");
  copy_fixtures(dir.path(), {"twin_a", "twin_b"});
  Registry registry;
  auto search = isolated_search();
  search.dirs = {dir.path()};
  try {
    registry.discover(search);
    FAIL("an ambiguous (kind, name) was accepted");
  } catch (const PluginError& e) {
    CHECK_THAT(e.what(), Contains("libshardkit-policy-twin_a.so"));
    CHECK_THAT(e.what(), Contains("libshardkit-policy-twin_b.so"));
  }
}

TEST_CASE("discover: explicit failures throw, missing --plugin_path dirs are errors",
          "[plugin][registry]") {
  Registry registry;
  auto search = isolated_search();
  search.explicit_files = {fixture("bad_abi")};
  CHECK_THROWS_WITH(registry.discover(search), Contains("libshardkit-policy-bad_abi.so"));
  CHECK(registry.refused().empty());

  search = isolated_search();
  const std::string missing = std::string(SHARDKIT_FIXTURE_DIR) + "/no-such-dir";
  search.dirs = {missing};
  CHECK_THROWS_AS(registry.discover(search), ConfigError);
  CHECK_THROWS_WITH(registry.discover(search), Contains(missing));
}

TEST_CASE("discover reads SHARDKIT_PLUGIN_PATH and skips missing entries in it",
          "[plugin][registry]") {
  TempDir dir("shardkit-plugin-test");
  copy_fixtures(dir.path(), {"good"});
  const std::string value = dir.path() + "/missing:" + dir.path();
  ::setenv("SHARDKIT_PLUGIN_PATH", value.c_str(), 1);
  Registry with_env, without_env;
  auto search = isolated_search();
  search.use_env = true;
  with_env.discover(search);
  without_env.discover(isolated_search());
  ::unsetenv("SHARDKIT_PLUGIN_PATH");
  CHECK(with_env.names("policy") == std::vector<std::string>{"good"});
  CHECK(without_env.all().empty());
}

TEST_CASE("the default plugin dir is found next to the executable", "[plugin][registry]") {
  // Test executables live in the build tree's bin/, whose ../lib/shardkit/plugins is
  // SHARDKIT_PLUGIN_DIR once any plugin was built.
  if (fs::is_directory(SHARDKIT_PLUGIN_DIR))
    CHECK(shardkit::default_plugin_dir() == fs::canonical(SHARDKIT_PLUGIN_DIR).string());
  else
    CHECK(shardkit::default_plugin_dir().empty());
}
