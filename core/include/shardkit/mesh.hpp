// The data-parallel device mesh: dp_replicate x dp_shard ranks, shard dimension innermost.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "shardkit/comm.hpp"

namespace shardkit {

/// The mesh's degrees as the user gave them and as resolved.
struct MeshShape {
  int dp_replicate = 1;  ///< replicas (plain DDP across them)
  int dp_shard = 1;      ///< ranks a sharded backend splits parameters over
  int world_size() const { return dp_replicate * dp_shard; }
};

/// LeRobot's resolution rules. `replicate` and `shard` are the flags' values (default 1;
/// shard -1 = fill from the world size); `touched` is false when neither flag was set, in
/// which case W processes become dp_replicate=W (plain DDP). Throws ConfigError echoing
/// every degree and the world size when they do not multiply to it.
MeshShape resolve_mesh(int world_size, int replicate, int shard, bool touched);

/// The mesh of this run: which rank sits where and one group per dimension.
/// Rank r sits at (r / dp_shard, r % dp_shard): shard groups are runs of consecutive
/// ranks (inside a node), replica groups stride by dp_shard (across nodes).
class DeviceMesh {
 public:
  /// Builds the groups through `comm` (nullptr, or a world of one, gives local groups).
  DeviceMesh(MeshShape shape, int rank, Comm* comm);
  /// The mesh as rank 0 of `shape` sees it, with planning groups (make_planning_group): for
  /// computing layouts and memory plans in one process.
  static DeviceMesh planning(MeshShape shape);
  /// Replaces every group by `wrap(group)` (a group shared by two dimensions stays shared),
  /// e.g. to record their collectives.
  void wrap_groups(const std::function<std::shared_ptr<CommGroup>(std::shared_ptr<CommGroup>)>& wrap);

  const MeshShape& shape() const { return shape_; }
  int rank() const { return rank_; }
  int replicate_index() const { return rank_ / shape_.dp_shard; }
  int shard_index() const { return rank_ % shape_.dp_shard; }

  /// Every rank of the run.
  CommGroup& world() const { return *world_; }
  /// The ranks holding the other shards of this rank's parameters (dp_shard members).
  CommGroup& shard_group() const { return *shard_; }
  /// The ranks holding the same shard as this one (dp_replicate members).
  CommGroup& replicate_group() const { return *replicate_; }
  /// All data-parallel ranks (the world, while the mesh has no other dimensions).
  CommGroup& dp_group() const { return *world_; }

  std::shared_ptr<CommGroup> world_ptr() const { return world_; }
  std::shared_ptr<CommGroup> shard_group_ptr() const { return shard_; }
  std::shared_ptr<CommGroup> replicate_group_ptr() const { return replicate_; }

  /// "dp_replicate=R, dp_shard=S".
  std::string describe() const;

 private:
  MeshShape shape_;
  int rank_;
  std::shared_ptr<CommGroup> world_, shard_, replicate_;
};

}  // namespace shardkit
