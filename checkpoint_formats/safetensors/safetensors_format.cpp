// Checkpoint format `safetensors`: model.safetensors and optimizer_state.safetensors with whole tensors.
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/whole_state.hpp>

namespace {

class SafetensorsFormat final : public shardkit::CheckpointFormat {
 public:
  void save(const shardkit::ShardedState& state, const std::string& dir, shardkit::CommGroup* group) override {
    shardkit::save_whole_state(state, "", dir, group);
  }
  void load(shardkit::ShardedState& wanted, const std::string& dir, shardkit::CommGroup*) override {
    shardkit::load_whole_state(wanted, "", dir);
  }
  bool has_model(const std::string& dir) const override { return shardkit::has_whole_model(dir); }
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) {
  return std::make_shared<SafetensorsFormat>();
}

}  // namespace

// Sharded states (fsdp, zero) are gathered to rank 0 and written whole.
SHARDKIT_PLUGIN_WITH_TRAITS(checkpoint_format, safetensors, "0.1.0",
                            "Whole tensors in safetensors files (LeRobot's layout)", SHARDKIT_PLUGIN_NO_OPTIONS,
                            make, shardkit::kAcceptsShardedState)
