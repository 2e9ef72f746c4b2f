// The mesh of a resumed run: the checkpoint's degrees bind it unless the command line changes the
// topology, and on another number of processes they keep their kind.
#include "../../../apps/shardkit-train/src/resumed_mesh.hpp"  // before Catch: it brings LibTorch's CHECK
#include "shardkit/error.hpp"

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace shardkit;
using shardkit::test::contains;

namespace {

/// A checkpoint's train_config.json degrees, as load_config_file reads them.
RawConfig saved_degrees(std::int64_t replicate, std::int64_t shard) {
  return {{"parallelism.dp_replicate", RawValue{Value{replicate}, "saved config train_config.json:40:25"}},
          {"parallelism.dp_shard", RawValue{Value{shard}, "saved config train_config.json:41:21"}},
          {"steps", RawValue{Value{std::int64_t{20}}, "saved config train_config.json:50:12"}}};
}

RawConfig flags_of(const std::map<std::string, std::string>& given) {
  RawConfig flags;
  for (const auto& [key, value] : given) flags[key] = RawValue{Value{value}, "--" + key};
  return flags;
}

/// The ddp (replicating) and fsdp (sharding) backends, as shardkit-train loads them.
struct Backends {
  Registry registry;
  Backends() {
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-backend-ddp.so");
    registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-backend-fsdp.so");
  }
};

}  // namespace

TEST_CASE("a checkpoint's mesh fits the same number of processes unchanged") {
  for (const MeshShape saved : {MeshShape{1, 1}, MeshShape{2, 1}, MeshShape{1, 2}, MeshShape{2, 2}}) {
    const auto m = train::refit_mesh(saved, saved.world_size());
    CHECK(m.dp_replicate == saved.dp_replicate);
    CHECK(m.dp_shard == saved.dp_shard);
  }
}

TEST_CASE("on another number of processes a checkpoint's mesh keeps its kind") {
  const auto check = [](MeshShape saved, int world, MeshShape want) {
    INFO(saved.dp_replicate << " x " << saved.dp_shard << " on " << world);
    const auto m = train::refit_mesh(saved, world);
    CHECK(m.dp_replicate == want.dp_replicate);
    CHECK(m.dp_shard == want.dp_shard);
  };
  // Replicated (ddp): one replica per process.
  check({2, 1}, 3, {3, 1});
  check({2, 1}, 1, {1, 1});
  check({1, 1}, 2, {2, 1});
  // Fully sharded (fsdp, zero): over every process.
  check({1, 2}, 3, {1, 3});
  check({1, 2}, 4, {1, 4});
  check({1, 8}, 3, {1, 3});
  check({1, 2}, 1, {1, 1});
  // Hybrid: the shard degree each process was sized for, where it divides the processes.
  check({2, 2}, 6, {3, 2});
  check({2, 2}, 3, {1, 3});
  check({2, 2}, 1, {1, 1});
}

TEST_CASE("resumed_mesh uses the saved degrees as they are when they fit, and says what it used when not") {
  std::string notice;
  auto m = train::resumed_mesh(2, 1, 2, notice);
  CHECK(m.dp_shard == 2);
  CHECK(notice.empty());

  m = train::resumed_mesh(3, 1, 2, notice);
  CHECK(m.dp_replicate == 1);
  CHECK(m.dp_shard == 3);
  CHECK(contains(notice, "the checkpoint's mesh dp_replicate=1, dp_shard=2 was written by 2 processes; on 3 "
                         "processes this run uses dp_replicate=1, dp_shard=3 (sharded over every process)"));
  CHECK(contains(notice, "--parallelism.dp_replicate and --parallelism.dp_shard"));

  notice.clear();
  m = train::resumed_mesh(1, 1, 2, notice);
  CHECK(m.world_size() == 1);
  CHECK(contains(notice, "on 1 process this run uses dp_replicate=1, dp_shard=1 (one process holds the whole model)"));

  // Degrees that are no degrees get resolve_mesh's own error, not a refit.
  CHECK_THROWS_AS(train::resumed_mesh(2, 0, 2, notice), ConfigError);
}

TEST_CASE("the checkpoint's degrees bind a resume unless the command line changes the topology") {
  Backends backends;
  const auto keeps = [&](const std::map<std::string, std::string>& given, RawConfig saved) {
    const auto flags = flags_of(given);
    const auto backend = given.count("distributed_backend") ? given.at("distributed_backend") : std::string("auto");
    const bool kept = train::keep_saved_mesh(flags, backend, backends.registry, saved);
    // What does not bind is gone from the saved layer; the other saved values stay.
    CHECK(saved.count("parallelism.dp_shard") == (kept ? 1u : 0u));
    CHECK(saved.count("steps") == 1);
    return kept;
  };
  // Nothing about the topology on the command line: the saved mesh (an fsdp run's, a ddp run's).
  CHECK(keeps({}, saved_degrees(1, 2)));
  CHECK(keeps({{"steps", "40"}}, saved_degrees(2, 1)));
  CHECK(keeps({{"distributed_backend", "auto"}}, saved_degrees(1, 2)));
  // A backend that shards as the saved mesh does keeps it.
  CHECK(keeps({{"distributed_backend", "fsdp"}}, saved_degrees(2, 2)));
  CHECK(keeps({{"distributed_backend", "ddp"}}, saved_degrees(2, 1)));
  // A degree given describes the whole mesh; a backend of the other kind brings its own.
  CHECK_FALSE(keeps({{"parallelism.dp_shard", "2"}}, saved_degrees(2, 1)));
  CHECK_FALSE(keeps({{"parallelism.dp_replicate", "3"}}, saved_degrees(1, 2)));
  CHECK_FALSE(keeps({{"distributed_backend", "ddp"}}, saved_degrees(1, 2)));
  CHECK_FALSE(keeps({{"distributed_backend", "fsdp"}}, saved_degrees(2, 1)));
  // A checkpoint without degrees binds nothing.
  RawConfig none = {{"steps", RawValue{Value{std::int64_t{20}}, "saved config train_config.json:50:12"}}};
  CHECK_FALSE(train::keep_saved_mesh({}, "auto", backends.registry, none));
}
