// Mesh resolution (LeRobot's rules) and rank placement with the shard dimension innermost.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include "shardkit/error.hpp"
#include "shardkit/mesh.hpp"
#include "test_support.hpp"

using shardkit::ConfigError;
using shardkit::resolve_mesh;
using shardkit::test::contains;

namespace {
std::string error_of(int world, int replicate, int shard, bool touched) {
  try {
    resolve_mesh(world, replicate, shard, touched);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("an untouched mesh on W processes is W replicas (plain DDP)") {
  for (int w : {1, 2, 3, 8}) {
    const auto m = resolve_mesh(w, 1, 1, false);
    CHECK(m.dp_replicate == w);
    CHECK(m.dp_shard == 1);
  }
}

TEST_CASE("dp_shard=-1 fills the shard dimension from the world size") {
  CHECK(resolve_mesh(8, 2, -1, true).dp_shard == 4);
  CHECK(resolve_mesh(4, 1, -1, true).dp_shard == 4);
  CHECK(resolve_mesh(3, 3, -1, true).dp_shard == 1);
}

TEST_CASE("explicit degrees must multiply to the world size") {
  const auto m = resolve_mesh(4, 2, 2, true);
  CHECK(m.dp_replicate == 2);
  CHECK(m.dp_shard == 2);
  const auto msg = error_of(4, 1, 2, true);
  CHECK(contains(msg, "--parallelism.dp_replicate=1"));
  CHECK(contains(msg, "--parallelism.dp_shard=2"));
  CHECK(contains(msg, "4 processes"));
  CHECK(contains(msg, "must equal the world size 4"));
  // Setting only one degree leaves the other at 1, as LeRobot does.
  CHECK(contains(error_of(2, 1, 1, true), "must equal the world size 2"));
}

TEST_CASE("dp_shard=-1 with an indivisible world names both numbers") {
  const auto msg = error_of(3, 2, -1, true);
  CHECK(contains(msg, "3 processes do not divide into 2 replicas"));
  CHECK(contains(error_of(2, 0, 1, true), "dp_replicate=0"));
  CHECK(contains(error_of(2, 1, 0, true), "dp_shard=0"));
  CHECK(contains(error_of(2, 1, -3, true), "dp_shard=-3"));
}

TEST_CASE("ranks sit with the shard dimension innermost") {
  shardkit::MeshShape shape{2, 3};
  for (int r = 0; r < 6; ++r) {
    shardkit::DeviceMesh mesh(shape, r, nullptr);  // local groups: placement only
    CHECK(mesh.replicate_index() == r / 3);
    CHECK(mesh.shard_index() == r % 3);
  }
  shardkit::DeviceMesh one({1, 1}, 0, nullptr);
  CHECK(one.world().size() == 1);
  CHECK(one.describe() == "dp_replicate=1, dp_shard=1");
}
