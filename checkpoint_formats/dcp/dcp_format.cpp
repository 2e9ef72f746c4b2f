// Checkpoint format `dcp`: model and optimizer state as PyTorch DCP folders (accelerate's layout).
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/plugin.hpp>

namespace {

class DcpFormat final : public shardkit::CheckpointFormat {
 public:
  explicit DcpFormat(const shardkit::PluginContext& context) : mesh_(context.mesh) {}

  void save(const shardkit::ShardedState& state, const std::string& dir,
            const shardkit::Runtime&) override {
    shardkit::dcp::save_checkpoint(state, dir, mesh_ ? &mesh_->world() : nullptr);
  }
  void load(shardkit::ShardedState& wanted, const std::string& dir, const shardkit::Runtime&) override {
    shardkit::dcp::load_checkpoint(wanted, dir);
  }
  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::has_checkpoint_model(dir);
  }

 private:
  shardkit::DeviceMesh* mesh_;  // null in single-process tools
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  return std::make_shared<DcpFormat>(context);
}

}  // namespace

SHARDKIT_PLUGIN_WITH_CAPABILITIES(
    checkpoint_format, dcp, "0.1.0",
    "PyTorch Distributed Checkpoint folders, one file per rank (accelerate's layout)",
    SHARDKIT_PLUGIN_NO_OPTIONS, make, shardkit::kAcceptsShardedState)
