// Checkpoint format `safetensors_dcp`: both artefacts, the whole-weight model.safetensors and the DCP folders
// (with --ema.enable also pretrained_model_ema/'s).
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/whole_state.hpp>

namespace {

class SafetensorsDcpFormat final : public shardkit::CheckpointFormat {
 public:

  void save(const shardkit::ShardedState& state, const std::string& dir, shardkit::CommGroup* group) override {
    shardkit::dcp::save_checkpoint(state, dir, group);
    shardkit::save_whole_state(state, "model.", dir, group);
    if (!state.keys_with_prefix("ema.").empty()) shardkit::save_whole_state(state, "ema.", dir, group);
  }
  // Resume reads the DCP shards: they hold the optimizer state and load at any topology.
  void load(shardkit::ShardedState& wanted, const std::string& dir, shardkit::CommGroup*) override {
    shardkit::dcp::load_checkpoint(wanted, dir);
  }
  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::has_checkpoint_model(dir) && shardkit::has_whole_model(dir);
  }
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) {
  return std::make_shared<SafetensorsDcpFormat>();
}

}  // namespace

SHARDKIT_PLUGIN_WITH_TRAITS(checkpoint_format, safetensors_dcp, "0.1.0",
                "model.safetensors (whole weights) plus DCP folders (resume at any topology)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make, shardkit::kAcceptsShardedState)
