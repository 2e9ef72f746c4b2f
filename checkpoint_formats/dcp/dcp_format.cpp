// Checkpoint format `dcp`: model and optimizer state as PyTorch DCP folders (accelerate's layout).
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/plugin.hpp>

namespace {

class DcpFormat final : public shardkit::CheckpointFormat {
 public:

  void save(const shardkit::ShardedState& state, const std::string& dir, shardkit::CommGroup* group) override {
    shardkit::dcp::save_checkpoint(state, dir, group);
  }
  void load(shardkit::ShardedState& wanted, const std::string& dir, shardkit::CommGroup*) override {
    shardkit::dcp::load_checkpoint(wanted, dir);
  }
  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::has_checkpoint_model(dir);
  }
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) {
  return std::make_shared<DcpFormat>();
}

}  // namespace

SHARDKIT_PLUGIN_WITH_TRAITS(
    checkpoint_format, dcp, "0.1.0",
    "PyTorch Distributed Checkpoint folders, one file per rank (accelerate's layout)",
    SHARDKIT_PLUGIN_NO_OPTIONS, make, shardkit::kAcceptsShardedState)
