// The installed SDK: install the tree, build examples/third_party_policy against it, train with it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

bool have_program(const std::string& name) {
  return run_command("command -v " + name + " >/dev/null").exit_code == 0;
}

/// An installed copy of the build tree, and the example plugin built against it.
struct InstalledSdk {
  TempDir tmp{"shardkit-sdk"};
  std::string prefix = tmp / "prefix";
  std::string plugin = tmp / "example-build/libshardkit-policy-gated_mlp.so";
  std::string guide = tmp / "guide-build";  ///< examples/plugin_guide's plugins (docs/plugins.md)
  std::string build_output;  ///< what configuring and building the examples printed
};

/// Configures and builds the CMake project examples/<example> against `sdk`'s prefix into
/// `build_dir`; returns what the tools printed, failing the test when they fail.
std::string build_example(const InstalledSdk& sdk, const std::string& example, const std::string& build_dir) {
  std::string configure = "cmake -S " + shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/examples/" + example) +
                          " -B " + shell_quote(build_dir) + " -DCMAKE_PREFIX_PATH=" + shell_quote(sdk.prefix);
  if (have_program("ninja")) configure += " -G Ninja";
  // With ccache, paths relative to the temp folder keep the cache valid from run to run.
  std::string build_env;
  if (have_program("ccache")) {
    configure += " -DCMAKE_CXX_COMPILER_LAUNCHER=ccache";
    build_env = "CCACHE_BASEDIR=" + shell_quote(sdk.tmp.path()) + " ";
  }
  const auto built = run_command(configure + " && " + build_env + "cmake --build " + shell_quote(build_dir));
  INFO(built.output);
  REQUIRE(built.exit_code == 0);
  return built.output;
}

/// Installs SHARDKIT_BUILD_DIR into a fresh prefix and builds the example against it
/// (fails the test, showing the tools' output, when either step fails).
std::unique_ptr<InstalledSdk> install_and_build_example_now() {
  auto sdk = std::make_unique<InstalledSdk>();
  const auto install = run_command("cmake --install " + shell_quote(SHARDKIT_BUILD_DIR) + " --prefix " +
                                   shell_quote(sdk->prefix));
  INFO(install.output);
  REQUIRE(install.exit_code == 0);

  sdk->build_output = build_example(*sdk, "third_party_policy", sdk->tmp / "example-build");
  REQUIRE(fs::is_regular_file(sdk->plugin));
  sdk->build_output += build_example(*sdk, "plugin_guide", sdk->guide);
  return sdk;
}

/// The process's one installed SDK, made on first use (ctest runs each case in its own
/// process; run directly, the cases share one).
const InstalledSdk& installed_sdk() {
  static const std::unique_ptr<InstalledSdk> sdk = install_and_build_example_now();
  return *sdk;
}

/// Runs the installed shardkit-train with nothing from the environment pointing at the
/// build tree: no SHARDKIT_PLUGIN_PATH, no LD_LIBRARY_PATH.
ProcessResult installed_train(const InstalledSdk& sdk, const std::vector<std::string>& args) {
  std::string command = "env -u SHARDKIT_PLUGIN_PATH -u LD_LIBRARY_PATH " +
                        shell_quote(sdk.prefix + "/bin/shardkit-train");
  for (const auto& a : args) command += " " + shell_quote(a);
  return run_command(command);
}

/// Flags for a short run into `out` (20 steps, metrics at 10 and 20, a checkpoint at the end).
std::vector<std::string> short_run(const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--output_dir=" + out, "--steps=20", "--log_freq=10",
                                   "--dataset.num_samples=256", "--num_threads=1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// The "policy" object of the train_config.json saved with the last checkpoint of a run
/// into `out` (its text; the object holds no nested objects, but its strings may hold braces,
/// e.g. normalization_mapping: it ends at the pretty-printed closing brace).
std::string saved_policy_config(const std::string& out) {
  const fs::path file = fs::path(out) / "checkpoints/last/pretrained_model/train_config.json";
  INFO(file.string());
  REQUIRE(fs::is_regular_file(file));
  const std::string text = slurp(file.string());
  INFO(text);
  const auto begin = text.find("\"policy\":");
  REQUIRE(begin != std::string::npos);
  const auto end = text.find("\n  }", begin);
  REQUIRE(end != std::string::npos);
  return text.substr(begin, end - begin);
}

/// Whether a JSON object's text holds "type": "<type>" (with or without a space).
bool has_type(const std::string& object, const std::string& type) {
  return object.find("\"type\": \"" + type + "\"") != std::string::npos ||
         object.find("\"type\":\"" + type + "\"") != std::string::npos;
}

}  // namespace

TEST_CASE("a third-party policy builds against the installed SDK and trains", "[sdk]") {
  const auto& sdk = installed_sdk();
  // The SDK a third party needs, and the built-in plugins, are in the installed tree.
  for (const auto* f : {"include/shardkit/plugin.hpp", "include/shardkit/nn/block.hpp",
                        "lib/cmake/shardkit/shardkitConfig.cmake",
                        "lib/shardkit/plugins/libshardkit-policy-mlp.so", "bin/shardkit-train"}) {
    INFO(f);
    CHECK(fs::is_regular_file(fs::path(sdk.prefix) / f));
  }
  {
    INFO(sdk.build_output);
    CHECK(sdk.build_output.find("warning:") == std::string::npos);
  }

  const auto out = sdk.tmp / "run-gated_mlp";
  // Dataset, backend and checkpoint format come from the installed plugin folder, which
  // shardkit-train finds next to itself; the policy comes from the example.
  const auto run = installed_train(sdk, short_run(out, {"--plugins=" + sdk.plugin,
                                                         "--policy.type=gated_mlp",
                                                         "--policy.hidden_dim=16"}));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto lines = read_metrics(out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].step == 10);
  CHECK(lines[1].step == 20);
  const auto policy = saved_policy_config(out);
  INFO(policy);
  CHECK(has_type(policy, "gated_mlp"));
  CHECK(policy.find("\"activation\"") != std::string::npos);  // the example's own option
}

TEST_CASE("the installed programs find the built-in plugins next to themselves", "[sdk]") {
  const auto& sdk = installed_sdk();
  const auto plugins = fs::canonical(sdk.prefix).string() + "/lib/shardkit/plugins";
  const auto env = run_command("env -u SHARDKIT_PLUGIN_PATH -u LD_LIBRARY_PATH " +
                               shell_quote(sdk.prefix + "/bin/shardkit-env"));
  INFO(env.output);
  REQUIRE(env.exit_code == 0);
  CHECK(env.output.find("next to the executable: " + plugins + "\n") != std::string::npos);
  CHECK(env.output.find(plugins + "/libshardkit-policy-mlp.so") != std::string::npos);
  CHECK(env.output.find(SHARDKIT_PLUGIN_DIR) == std::string::npos);  // nothing from the build tree

  // Every installed library resolves its dependencies through its RPATH alone, so any
  // host (not only shardkit-train, which has loaded libshardkit_core.so already) can load it.
  for (const auto& entry : fs::directory_iterator(plugins)) {
    const auto ldd = run_command("env -u LD_LIBRARY_PATH ldd " + shell_quote(entry.path().string()));
    INFO(entry.path().string() << "\n" << ldd.output);
    CHECK(ldd.exit_code == 0);
    CHECK(ldd.output.find("libshardkit_core.so") != std::string::npos);
    CHECK(ldd.output.find("not found") == std::string::npos);
  }

  // No --plugins at all: policy, dataset, backend and format all come from the prefix.
  const auto out = sdk.tmp / "run-default";
  const auto run = installed_train(sdk, short_run(out, {}));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(read_metrics(out).size() == 2);
  CHECK(has_type(saved_policy_config(out), "mlp"));
}

TEST_CASE("an explicit third-party plugin leaves the built-in policies usable", "[sdk]") {
  const auto& sdk = installed_sdk();

  SECTION("--policy.type=mlp still trains mlp") {
    const auto out = sdk.tmp / "run-mlp";
    const auto run = installed_train(sdk, short_run(out, {"--plugins=" + sdk.plugin,
                                                           "--policy.type=mlp"}));
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    CHECK(read_metrics(out).size() == 2);
    const auto policy = saved_policy_config(out);
    INFO(policy);
    CHECK(has_type(policy, "mlp"));
    CHECK(policy.find("\"activation\"") == std::string::npos);
  }

  SECTION("--help with --policy.type=gated_mlp lists the example's options") {
    const auto help = installed_train(sdk, {"--plugins=" + sdk.plugin, "--policy.type=gated_mlp",
                                             "--help"});
    INFO(help.output);
    CHECK(help.exit_code == 0);
    const auto section = help.output.find("policy 'gated_mlp' options:");
    REQUIRE(section != std::string::npos);
    for (const auto* option : {"--policy.hidden_dim=", "--policy.num_blocks=",
                               "--policy.expansion=", "--policy.activation="})
      CHECK(help.output.find(option, section) != std::string::npos);
    CHECK(help.output.find("silu|gelu|relu", section) != std::string::npos);
  }
}

TEST_CASE("the plugins docs/plugins.md shows whole (policy, dataset, logger) build and train together", "[sdk]") {
  const auto& sdk = installed_sdk();
  for (const auto* file : {"libshardkit-policy-tiny_mlp.so", "libshardkit-dataset-ramp.so", "libshardkit-logger-csv.so"}) {
    INFO(file);
    REQUIRE(fs::is_regular_file(fs::path(sdk.guide) / file));
  }
  const auto out = sdk.tmp / "run-guide";
  const auto run = installed_train(sdk, {"--output_dir=" + out, "--plugin_path=" + sdk.guide, "--policy.type=tiny_mlp",
                                         "--dataset.type=ramp", "--logger.type=csv", "--steps=20", "--log_freq=10",
                                         "--num_threads=1"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("tiny_mlp: 4 -> 64 -> 2") != std::string::npos);  // ctx.logger, sizes from the features
  const auto lines = read_metrics(out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].number("loss") < lines[0].number("loss"));
  CHECK(lines[0].raw.count("abs_error"));  // the policy's own metric
  // The csv logger got the same rows: a header and one line per log step, step first.
  const auto csv = slurp(out + "/metrics.csv");
  INFO(csv);
  CHECK(csv.rfind("step,epoch,loss,lr,", 0) == 0);
  CHECK(csv.find("abs_error") != std::string::npos);
  CHECK(csv.find("\n10,") != std::string::npos);
  CHECK(csv.find("\n20,") != std::string::npos);
}
