// Device-mesh resolution (LeRobot's rules) and the per-dimension process groups.
#include "shardkit/mesh.hpp"

#include <numeric>
#include <vector>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

std::string degrees(int world, int replicate, int shard) {
  return "--parallelism.dp_replicate=" + std::to_string(replicate) +
         " x --parallelism.dp_shard=" + std::to_string(shard) + " with " + std::to_string(world) +
         (world == 1 ? " process" : " processes");
}

}  // namespace

MeshShape resolve_mesh(int world_size, int replicate, int shard, bool touched) {
  if (!touched) return {world_size, 1};
  if (replicate < 1)
    throw ConfigError("--parallelism.dp_replicate=" + std::to_string(replicate) +
                      ": must be at least 1");
  if (shard == 0 || shard < -1)
    throw ConfigError("--parallelism.dp_shard=" + std::to_string(shard) +
                      ": must be at least 1, or -1 to fill the world size");
  if (shard == -1) {
    if (world_size % replicate != 0)
      throw ConfigError(degrees(world_size, replicate, shard) + ": dp_shard=-1 fills the world, but " +
                        std::to_string(world_size) + " processes do not divide into " +
                        std::to_string(replicate) + " replicas; start a multiple of " +
                        std::to_string(replicate) + " processes or change dp_replicate");
    shard = world_size / replicate;
  }
  if (replicate * shard != world_size)
    throw ConfigError(degrees(world_size, replicate, shard) + ": dp_replicate x dp_shard = " +
                      std::to_string(replicate * shard) + " must equal the world size " +
                      std::to_string(world_size) + "; start " + std::to_string(replicate * shard) +
                      " processes, or set the degrees so they multiply to " +
                      std::to_string(world_size) + " (dp_shard=-1 fills it)");
  return {replicate, shard};
}

DeviceMesh::DeviceMesh(MeshShape shape, int rank, Comm* comm) : shape_(shape), rank_(rank) {
  const int world = shape_.world_size();
  if (!comm || world == 1) {
    world_ = make_local_group("world");
    shard_ = make_local_group("dp_shard");
    replicate_ = make_local_group("dp_replicate");
    return;
  }
  world_ = comm->world();
  if (world_->size() != world)
    throw ConfigError("the mesh " + describe() + " needs " + std::to_string(world) +
                      " processes, but the run has " + std::to_string(world_->size()));
  const int r = replicate_index(), s = shard_index();
  std::vector<int> shard_ranks(static_cast<std::size_t>(shape_.dp_shard));
  std::iota(shard_ranks.begin(), shard_ranks.end(), r * shape_.dp_shard);
  std::vector<int> replicate_ranks;
  for (int i = 0; i < shape_.dp_replicate; ++i) replicate_ranks.push_back(i * shape_.dp_shard + s);
  shard_ = shape_.dp_shard == world ? world_
           : shape_.dp_shard == 1   ? make_local_group("dp_shard")
                                    : comm->new_group(shard_ranks, "dp_shard/" + std::to_string(r));
  replicate_ = shape_.dp_replicate == world ? world_
               : shape_.dp_replicate == 1   ? make_local_group("dp_replicate")
                                            : comm->new_group(replicate_ranks, "dp_replicate/" + std::to_string(s));
}

DeviceMesh DeviceMesh::planning(MeshShape shape) {
  DeviceMesh mesh(shape, 0, nullptr);
  mesh.world_ = make_planning_group("world", shape.world_size());
  mesh.shard_ = make_planning_group("dp_shard", shape.dp_shard);
  mesh.replicate_ = make_planning_group("dp_replicate", shape.dp_replicate);
  return mesh;
}

void DeviceMesh::wrap_groups(const std::function<std::shared_ptr<CommGroup>(std::shared_ptr<CommGroup>)>& wrap) {
  const auto world = wrap(world_);
  shard_ = shard_ == world_ ? world : wrap(shard_);
  replicate_ = replicate_ == world_ ? world : wrap(replicate_);
  world_ = world;
}

std::string DeviceMesh::describe() const {
  return "dp_replicate=" + std::to_string(shape_.dp_replicate) +
         ", dp_shard=" + std::to_string(shape_.dp_shard);
}

}  // namespace shardkit
