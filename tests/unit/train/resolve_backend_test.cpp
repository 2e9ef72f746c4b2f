// --distributed_backend=auto: among the backends that fit the mesh, the one preferred by auto, else
// the first by name; a mesh nothing installed fits is refused, naming what is installed.
#include "../../../apps/shardkit-train/src/train_options.hpp"  // before Catch (LibTorch): CHECK is Catch's

#include <catch2/catch.hpp>

#include "shardkit/error.hpp"
#include "test_support.hpp"

using namespace shardkit;
using Catch::Matchers::Contains;

namespace {

const std::string kShardingFixture = std::string(SHARDKIT_FIXTURE_DIR) +
                                     "/backends/libshardkit-backend-sharding_fixture.so";

void load_backend(Registry& registry, const std::string& name) {
  registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-backend-" + name + ".so");
}

}  // namespace

TEST_CASE("auto picks the preferred backend that fits: single, ddp, fsdp", "[train][backend]") {
  Registry registry;
  for (const auto* name : {"ddp", "fsdp", "single", "zero"}) load_backend(registry, name);
  registry.load_file(kShardingFixture);  // shards too, sorts first, is not preferred
  CHECK(train::resolve_backend("auto", MeshShape{1, 1}, registry) == "single");
  CHECK(train::resolve_backend("auto", MeshShape{2, 1}, registry) == "ddp");
  CHECK(train::resolve_backend("auto", MeshShape{1, 2}, registry) == "fsdp");
  CHECK(train::resolve_backend("auto", MeshShape{2, 2}, registry) == "fsdp");
  CHECK(train::resolve_backend("zero", MeshShape{1, 2}, registry) == "zero");  // a named one is kept
}

TEST_CASE("auto without a preferred backend takes the first that fits, by name", "[train][backend]") {
  Registry registry;
  load_backend(registry, "zero");
  registry.load_file(kShardingFixture);
  CHECK(train::resolve_backend("auto", MeshShape{1, 2}, registry) == "sharding_fixture");
}

TEST_CASE("auto refuses a mesh no installed backend fits, naming the installed ones", "[train][backend]") {
  Registry registry;
  load_backend(registry, "zero");
  CHECK_THROWS_WITH(train::resolve_backend("auto", MeshShape{1, 1}, registry),
                    Contains("needs a single-process backend, and none is installed (installed: zero)"));
  CHECK_THROWS_WITH(train::resolve_backend("auto", MeshShape{2, 1}, registry),
                    Contains("needs a data-parallel backend, and none is installed (installed: zero)"));
  Registry replicas_only;
  load_backend(replicas_only, "ddp");
  CHECK_THROWS_WITH(train::resolve_backend("auto", MeshShape{1, 2}, replicas_only),
                    Contains("--parallelism.dp_shard=2 shards parameters, but no installed backend shards them "
                             "(installed: ddp)"));
}
