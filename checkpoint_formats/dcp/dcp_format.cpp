// Checkpoint format `dcp`: model and optimizer state as PyTorch DCP folders (accelerate's layout).
#include <filesystem>
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/error.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/plugin.hpp>

namespace {
namespace fs = std::filesystem;

// accelerate's folder names, which LeRobot's sharded checkpoints use.
constexpr const char* kModelFolder = "pretrained_model/pytorch_model_fsdp_0";
constexpr const char* kOptimizerFolder = "training_state/optimizer_0";

class DcpFormat final : public shardkit::CheckpointFormat {
 public:
  explicit DcpFormat(const shardkit::PluginContext& context) : mesh_(context.mesh) {}

  void save(const shardkit::ShardedState& state, const std::string& dir,
            const shardkit::Runtime&) override {
    auto* world = this->world();
    shardkit::dcp::save_folder(state, "model.", (fs::path(dir) / kModelFolder).string(), world);
    shardkit::dcp::save_folder(state, "optimizer.", (fs::path(dir) / kOptimizerFolder).string(), world);
  }

  void load(shardkit::ShardedState& wanted, const std::string& dir,
            const shardkit::Runtime&) override {
    shardkit::dcp::load_folder(wanted, "model.", (fs::path(dir) / kModelFolder).string());
    if (!wanted.keys_with_prefix("optimizer.").empty())
      shardkit::dcp::load_folder(wanted, "optimizer.", (fs::path(dir) / kOptimizerFolder).string());
  }

  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::is_folder((fs::path(dir) / kModelFolder).string());
  }

 private:
  shardkit::CommGroup* world() { return mesh_ ? &mesh_->world() : nullptr; }

  shardkit::DeviceMesh* mesh_;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  return std::make_shared<DcpFormat>(context);
}

}  // namespace

SHARDKIT_PLUGIN(checkpoint_format, dcp, "0.1.0",
                "PyTorch Distributed Checkpoint folders, one file per rank (accelerate's layout)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
