// Each way a plugin file can be wrong gives its own message naming the file, and nothing crashes.
#include <catch2/catch.hpp>

#include "plugin_test_util.hpp"
#include "test_support.hpp"

#include <filesystem>

using Catch::Matchers::Contains;
using shardkit::test::fixture;
using shardkit::test::load_error;

namespace {

/// Loads fixture `name`, expects a refusal whose message holds `text` and the file name.
void expect_refused(const std::string& name, const std::string& text) {
  INFO("fixture " << name);
  const std::string message = load_error(fixture(name));
  CHECK_THAT(message, Contains(text));
  CHECK_THAT(message, Contains("libshardkit-policy-" + name + ".so"));
}

}  // namespace

TEST_CASE("a good plugin passes every check", "[plugin][loader]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("good"));
  REQUIRE(loaded.descriptor != nullptr);
  CHECK(std::string(loaded.descriptor->kind) == "policy");
  CHECK(std::string(loaded.descriptor->name) == "good");
  CHECK(std::string(loaded.descriptor->plugin_version) == "1.2.3");
  CHECK(loaded.file == shardkit::test::canonical_fixture("good"));
  CHECK_FALSE(loaded.explicit_file);
}

TEST_CASE("a missing file is refused by name", "[plugin][loader]") {
  const std::string path = std::string(SHARDKIT_FIXTURE_DIR) + "/libshardkit-policy-absent.so";
  const std::string message = load_error(path);
  CHECK_THAT(message, Contains("does not exist"));
  CHECK_THAT(message, Contains(path));
}

TEST_CASE("a file that is not a shared library does not load", "[plugin][loader]") {
  expect_refused("not_a_library", "does not load as a shared library: ");
}

TEST_CASE("a library without the entry symbol is refused", "[plugin][loader]") {
  expect_refused("no_entry",
                 "does not export shardkit_plugin_entry; was it built with SHARDKIT_PLUGIN()?");
}

TEST_CASE("a null descriptor is refused", "[plugin][loader]") {
  expect_refused("null_descriptor", "returned a null descriptor");
}

TEST_CASE("another plugin ABI version is refused with both values", "[plugin][loader]") {
  expect_refused("bad_abi", "incompatible plugin ABI version (plugin: 999, host: " +
                                std::to_string(shardkit::kPluginAbiVersion) +
                                "); rebuild the plugin against this shardkit");
}

TEST_CASE("a descriptor smaller than the smallest the host reads is refused with both sizes", "[plugin][loader]") {
  const auto least = shardkit::kMinDescriptorSize;
  expect_refused("bad_struct_size", "descriptor is smaller than any this shardkit reads (plugin: " +
                                        std::to_string(least - 8) + " bytes, at least: " + std::to_string(least) +
                                        " bytes)");
}

TEST_CASE("an older, smaller descriptor loads; the fields it lacks read as absent", "[plugin][loader]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("older_descriptor"));
  REQUIRE(loaded.descriptor != nullptr);
  CHECK(loaded.descriptor->struct_size == shardkit::kMinDescriptorSize);
  // Its file holds an alias list past struct_size: a value the loader must not read.
  CHECK(loaded.aliases.empty());
  CHECK(loaded.config_layer == nullptr);
  CHECK(loaded.config_check == nullptr);
  CHECK(registry.canonical_name("policy", "unread") == "unread");
}

TEST_CASE("a plugin's aliases select it; its own name and other plugins' names stay as they are",
          "[plugin][loader]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("aliased"));
  CHECK(loaded.aliases == std::vector<std::string>{"second", "third"});
  registry.load_file(fixture("good"));
  CHECK(registry.canonical_name("policy", "third") == "aliased");
  CHECK(registry.canonical_name("policy", "second") == "aliased");
  CHECK(registry.canonical_name("policy", "aliased") == "aliased");
  CHECK(registry.canonical_name("policy", "good") == "good");
  CHECK(registry.canonical_name("backend", "third") == "third");  // aliases hold within their kind
  CHECK(registry.canonical_name("policy", "unknown") == "unknown");
  // An unknown name's message lists each plugin with its aliases.
  try {
    registry.get("policy", "fourth");
    FAIL("an unknown policy was found");
  } catch (const shardkit::ConfigError& e) {
    CHECK_THAT(e.what(), Contains("available: aliased (also second, third), good"));
  }
}

TEST_CASE("a plugin listing its own name as an alias is refused", "[plugin][loader]") {
  expect_refused("self_alias", "lists 'self_alias' among its aliases ('other,self_alias')");
}

TEST_CASE("a larger descriptor (newer headers added fields) loads; the host reads the fields it knows",
          "[plugin][loader]") {
  shardkit::Registry registry;
  const auto& loaded = registry.load_file(fixture("grown_descriptor"));
  REQUIRE(loaded.descriptor != nullptr);
  CHECK(loaded.descriptor->struct_size == sizeof(shardkit::PluginDescriptor) + 8);
  CHECK(std::string(loaded.descriptor->name) == "grown_descriptor");
  CHECK(loaded.descriptor->num_capabilities == 0);
}

TEST_CASE("another version of the kind's interface is refused with both versions", "[plugin][loader]") {
  expect_refused("bad_kind_abi", "built against version 999 of the policy interface, this shardkit has "
                                 "version " + std::to_string(shardkit::kind_abi::policy) +
                                 "; rebuild the plugin against this shardkit");
}

TEST_CASE("another LibTorch version is refused with both versions", "[plugin][loader]") {
  expect_refused("bad_torch", std::string("built against LibTorch 0.0.1, this shardkit runs "
                                          "LibTorch ") + TORCH_VERSION);
}

TEST_CASE("a plugin built against LibTorch 1.13 (the old Debian SDK) is refused", "[plugin][loader]") {
  REQUIRE(std::string(TORCH_VERSION) == "2.15.0");
  expect_refused("torch_1_13", "built against LibTorch 1.13.1, this shardkit runs LibTorch 2.15.0; "
                               "rebuild the plugin against the same LibTorch");
}

TEST_CASE("the other LibTorch flavour (CUDA or CPU) is refused", "[plugin][loader]") {
  const bool host_cuda = shardkit::host_abi().torch_cuda != 0;
  expect_refused("bad_cuda", std::string("built against ") +
                                 (host_cuda ? "a CPU-only build" : "a CUDA build") +
                                 " of LibTorch (torch_cuda: " + (host_cuda ? "0" : "1") +
                                 "), this shardkit runs " +
                                 (host_cuda ? "a CUDA build" : "a CPU-only build"));
}

TEST_CASE("the other C++ ABI is refused with both values", "[plugin][loader]") {
  const auto host = shardkit::host_abi().cxx11_abi;
  expect_refused("bad_cxx_abi", "built with _GLIBCXX_USE_CXX11_ABI=" + std::to_string(1 - host) +
                                    ", this shardkit uses _GLIBCXX_USE_CXX11_ABI=" +
                                    std::to_string(host));
}

TEST_CASE("an unknown kind is refused, listing the known kinds", "[plugin][loader]") {
  expect_refused("bad_kind", "unknown plugin kind 'widget'; this shardkit knows: policy, backend, "
                             "checkpoint_format, dataset, comm, logger");
}

TEST_CASE("an empty name is refused", "[plugin][loader]") {
  expect_refused("empty_name", "the policy plugin has an empty name");
}

TEST_CASE("a null factory is refused", "[plugin][loader]") {
  expect_refused("null_factory", "policy 'null_factory' has a null factory");
}

TEST_CASE("a refused file leaves the registry unchanged", "[plugin][loader]") {
  shardkit::Registry registry;
  registry.load_file(fixture("good"));
  for (const auto& bad : {"bad_abi", "no_entry", "not_a_library", "null_factory"})
    CHECK_THROWS_AS(registry.load_file(fixture(bad)), shardkit::PluginError);
  REQUIRE(registry.all().size() == 1);
  CHECK(registry.names("policy") == std::vector<std::string>{"good"});
  CHECK(registry.refused().empty());  // load_file throws; only discover() records refusals
}

TEST_CASE("the host ABI is the one core was built with", "[plugin][loader]") {
  const auto host = shardkit::host_abi();
  CHECK(host.torch_version == TORCH_VERSION);
  CHECK(host.torch_cuda == static_cast<std::uint32_t>(SHARDKIT_TORCH_CUDA));
  CHECK(host.cxx11_abi == static_cast<std::uint32_t>(_GLIBCXX_USE_CXX11_ABI));
  CHECK(shardkit::plugin_kinds() == std::vector<std::string>{"policy", "backend",
                                                            "checkpoint_format", "dataset",
                                                            "comm", "logger"});
}

TEST_CASE("a plugin another user could have written is refused: a world-writable file or folder") {
  namespace fs = std::filesystem;
  shardkit::test::TempDir dir("sk-plugin-perms");
  const auto folder = fs::path(dir.path()) / "plugins";
  fs::create_directories(folder);
  fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  shardkit::test::copy_fixtures(folder.string(), {"good"});
  const auto file = (folder / fs::path(fixture("good")).filename()).string();
  CHECK(load_error(file).empty());  // 0755 folder, the copy's own mode: loads

  fs::permissions(file, fs::perms::others_write, fs::perm_options::add);
  auto message = load_error(file);
  CHECK_THAT(message, Catch::Contains("is writable by every user (mode 0"));
  CHECK_THAT(message, Catch::Contains("chmod o-w"));
  fs::permissions(file, fs::perms::others_write, fs::perm_options::remove);

  // /tmp's mode: world-writable with the sticky bit is still a folder anyone can put files in.
  fs::permissions(folder, fs::perms::all | fs::perms::sticky_bit);
  message = load_error(file);
  CHECK_THAT(message, Catch::Contains("lies in " + folder.string() + ", which every user can write to (mode 1777)"));

  // Found by a search, it is skipped with the reason, and the search goes on.
  shardkit::Registry registry;
  auto search = shardkit::test::isolated_search();
  search.dirs = {folder.string()};
  registry.discover(search);
  REQUIRE(registry.refused().size() == 1);
  CHECK_THAT(registry.refused().front().reason, Catch::Contains("which every user can write to"));
  fs::permissions(folder, fs::perms::owner_all);
}
