// Checkpoint format `safetensors_dcp`: both artefacts, the whole-weight model.safetensors and the DCP folders.
#include <filesystem>
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/mesh.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/whole_state.hpp>

namespace {
namespace fs = std::filesystem;

constexpr const char* kModelFolder = "pretrained_model/pytorch_model_fsdp_0";
constexpr const char* kOptimizerFolder = "training_state/optimizer_0";

class SafetensorsDcpFormat final : public shardkit::CheckpointFormat {
 public:
  explicit SafetensorsDcpFormat(const shardkit::PluginContext& context) : mesh_(context.mesh) {}

  void save(const shardkit::ShardedState& state, const std::string& dir,
            const shardkit::Runtime& runtime) override {
    auto* world = this->world();
    shardkit::dcp::save_folder(state, "model.", (fs::path(dir) / kModelFolder).string(), world);
    shardkit::dcp::save_folder(state, "optimizer.", (fs::path(dir) / kOptimizerFolder).string(), world);
    shardkit::save_whole_state(state, "model.", dir, runtime);
  }

  // Resume prefers the DCP shards: they hold the optimizer state and load at any topology.
  void load(shardkit::ShardedState& wanted, const std::string& dir, const shardkit::Runtime&) override {
    const auto model = (fs::path(dir) / kModelFolder).string();
    if (shardkit::dcp::is_folder(model)) shardkit::dcp::load_folder(wanted, "model.", model);
    else shardkit::load_whole_state(wanted, "model.", dir);
    if (!wanted.keys_with_prefix("optimizer.").empty())
      shardkit::dcp::load_folder(wanted, "optimizer.", (fs::path(dir) / kOptimizerFolder).string());
  }

  bool has_model(const std::string& dir) const override {
    return shardkit::dcp::is_folder((fs::path(dir) / kModelFolder).string()) &&
           shardkit::has_whole_model(dir);
  }

 private:
  shardkit::CommGroup* world() { return mesh_ ? &mesh_->world() : nullptr; }

  shardkit::DeviceMesh* mesh_;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& context) {
  return std::make_shared<SafetensorsDcpFormat>(context);
}

}  // namespace

SHARDKIT_PLUGIN(checkpoint_format, safetensors_dcp, "0.1.0",
                "model.safetensors (whole weights) plus DCP folders (resume at any topology)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
