// The mesh of a resumed run: the checkpoint's degrees, unless the command line changes the topology.
#include "resumed_mesh.hpp"

#include <variant>

#include "shardkit/plugin.hpp"
#include "train_options.hpp"

namespace shardkit::train {
namespace {

constexpr const char* kReplicate = "parallelism.dp_replicate";
constexpr const char* kShard = "parallelism.dp_shard";

/// Whether a saved mesh shards parameters: its dp_shard is not 1 (-1 fills the world; a value
/// that is not a number counts as sharding, and resolve() reports it).
bool saved_mesh_shards(const RawConfig& saved) {
  const auto it = saved.find(kShard);
  if (it == saved.end()) return false;
  const auto* degree = std::get_if<std::int64_t>(&it->second.value);
  return degree == nullptr || *degree != 1;
}

std::string describe(const MeshShape& mesh) {
  return "dp_replicate=" + std::to_string(mesh.dp_replicate) + ", dp_shard=" + std::to_string(mesh.dp_shard);
}

std::string processes(int count) { return std::to_string(count) + (count == 1 ? " process" : " processes"); }

std::string kind_of(const MeshShape& mesh) {
  if (mesh.world_size() == 1) return "one process holds the whole model";
  if (mesh.dp_shard == 1) return "one replica per process";
  if (mesh.dp_replicate == 1) return "sharded over every process";
  return std::to_string(mesh.dp_replicate) + " replicas of " + std::to_string(mesh.dp_shard) + " shards";
}

}  // namespace

bool keep_saved_mesh(const RawConfig& flags, const std::string& backend, const Registry& registry, RawConfig& saved) {
  if (!saved.count(kReplicate) && !saved.count(kShard)) return false;
  const bool degree_given = flags.count(kReplicate) || flags.count(kShard);
  // "auto" fits any mesh; a named backend keeps the saved mesh only where it shards as that mesh does
  // (ddp named over an fsdp checkpoint means plain data parallel, not ddp refusing dp_shard=2).
  const bool other_backend =
      flags.count("distributed_backend") && backend != "auto" &&
      ((traits_of(registry, "backend", backend) & kShardsParameters) != 0) != saved_mesh_shards(saved);
  if (!degree_given && !other_backend) return true;
  saved.erase(kReplicate);
  saved.erase(kShard);
  return false;
}

MeshShape refit_mesh(const MeshShape& saved, int world_size) {
  if (saved.world_size() == world_size) return saved;
  if (saved.dp_shard == 1) return {world_size, 1};
  if (saved.dp_replicate == 1) return {1, world_size};
  // A hybrid mesh's dp_shard is what each process was sized to hold: kept where it divides the processes.
  if (world_size % saved.dp_shard == 0) return {world_size / saved.dp_shard, saved.dp_shard};
  return {1, world_size};
}

MeshShape resumed_mesh(int world_size, int replicate, int shard, std::string& notice) {
  if (replicate < 1 || shard < 1 || replicate * shard == world_size)
    return resolve_mesh(world_size, replicate, shard, true);
  const MeshShape saved{replicate, shard};
  const auto mesh = refit_mesh(saved, world_size);
  notice = "the checkpoint's mesh " + describe(saved) + " was written by " + processes(saved.world_size()) + "; on " +
           processes(world_size) + " this run uses " + describe(mesh) + " (" + kind_of(mesh) +
           "); give --parallelism.dp_replicate and --parallelism.dp_shard to choose another mesh";
  return mesh;
}

}  // namespace shardkit::train
