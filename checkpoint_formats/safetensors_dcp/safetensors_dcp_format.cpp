// Checkpoint format `safetensors_dcp`: both artefacts, the whole-weight model.safetensors and the DCP folders.
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/whole_state.hpp>

namespace {

class SafetensorsDcpFormat final : public shardkit::CheckpointFormat {
 public:
  explicit SafetensorsDcpFormat(const shardkit::PluginContext& context) : mesh_(context.mesh) {}

  void save(const shardkit::ShardedState& state, const std::string& dir,
            const shardkit::Runtime& runtime) override {
    shardkit::dcp::save_checkpoint(state, dir, mesh_ ? &mesh_->world() : nullptr);
    shardkit::save_whole_state(state, "model.", dir, runtime);
  }
  // Resume reads the DCP shards: they hold the optimizer state and load at any topology.
  void load(shardkit::ShardedState& wanted, const std::string& dir, const shardkit::Runtime&) override {
    shardkit::dcp::load_checkpoint(wanted, dir);
  }
  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::has_checkpoint_model(dir) && shardkit::has_whole_model(dir);
  }

 private:
  shardkit::DeviceMesh* mesh_;  // null in single-process tools
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  return std::make_shared<SafetensorsDcpFormat>(context);
}

}  // namespace

SHARDKIT_PLUGIN(checkpoint_format, safetensors_dcp, "0.1.0",
                "model.safetensors (whole weights) plus DCP folders (resume at any topology)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
