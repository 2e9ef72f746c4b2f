// The run builder turns a command line into a plan (values, provenance, plugins, mesh) without
// training: what it selects and resolves for one process, a launched run and a dry run, and that
// it reports every problem at once.
#include "../../../apps/shardkit-train/src/run_builder.hpp"  // before Catch (LibTorch): CHECK is Catch's

#include <catch2/catch.hpp>

#include "shardkit/error.hpp"
#include "test_support.hpp"

using namespace shardkit;
using Catch::Matchers::Contains;
using train::build_run;

namespace {

/// The plugins this build made (the unit test's binary is not beside them).
std::vector<std::string> with_plugins(std::vector<std::string> args) {
  args.push_back(std::string("--plugin_path=") + SHARDKIT_PLUGIN_DIR);
  return args;
}

Runtime launched(int world_size) {
  Runtime runtime;
  runtime.world_size = world_size;
  runtime.local_world_size = world_size;
  return runtime;
}

}  // namespace

TEST_CASE("one process: the defaults' plugins, the given values with their origin", "[train][run_builder]") {
  const auto plan = build_run(with_plugins({"--steps=20", "--batch_size=4"}), Runtime{});
  CHECK_FALSE(plan.help.has_value());
  CHECK(plan.selection.policy == "mlp");
  CHECK(plan.selection.dataset == "synthetic");
  CHECK(plan.selection.backend == "single");
  CHECK(plan.mesh.world_size() == 1);
  CHECK(plan.options.steps == 20);
  CHECK(plan.options.batch_size == 4);
  CHECK(plan.config.get_int("steps") == 20);
  REQUIRE(plan.provenance.find("steps") != nullptr);
  CHECK(plan.provenance.find("steps")->origin == "--steps");
  CHECK_FALSE(plan.dry_run);
  CHECK(plan.resume_dir.empty());
  REQUIRE(plan.registry != nullptr);
  CHECK(plan.registry->find("backend", "single") != nullptr);
}

TEST_CASE("a launched run: the sharded mesh selects fsdp, and the transport follows the device",
          "[train][run_builder]") {
  const auto plan = build_run(with_plugins({"--parallelism.dp_shard=2", "--checkpoint_format=dcp"}), launched(2));
  CHECK(plan.mesh.dp_shard == 2);
  CHECK(plan.mesh.dp_replicate == 1);
  CHECK(plan.selection.backend == "fsdp");
  CHECK(plan.selection.comm == "gloo");
  CHECK(plan.selection.checkpoint_format == "dcp");
  // The backend's own options joined the schema: they have their defaults.
  CHECK(plan.config.has("accelerator.fsdp.reshard_after_forward"));
}

TEST_CASE("a dry run plans for the degrees given, on one process", "[train][run_builder]") {
  const auto plan = build_run(with_plugins({"--dry_run=true", "--parallelism.dp_shard=4"}), Runtime{});
  CHECK(plan.dry_run);
  CHECK(plan.mesh.dp_shard == 4);
  CHECK(plan.selection.backend == "fsdp");
}

TEST_CASE("--help is a plan of its own: the text, nothing resolved", "[train][run_builder]") {
  const auto plan = build_run(with_plugins({"--help"}), Runtime{});
  REQUIRE(plan.help.has_value());
  CHECK_THAT(*plan.help, Contains("usage: shardkit-train") && Contains("--steps"));
}

TEST_CASE("every problem of a command line is reported at once", "[train][run_builder]") {
  try {
    build_run(with_plugins({"--steps=0", "--batch_size=x", "--save_freq=3",
                            "--accelerator.gradient_accumulation.steps=2"}), Runtime{});
    FAIL("build_run accepted --steps=0 and --batch_size=x");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Contains("--steps") && Contains("--batch_size") && Contains("--save_freq=3"));
  }
}
