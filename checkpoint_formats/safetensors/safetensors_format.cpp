// Checkpoint format `safetensors`: model.safetensors and optimizer_state.safetensors with whole tensors.
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <memory>

#include <shardkit/checkpoint_format.hpp>
#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>
#include <shardkit/safetensors.hpp>
#include <shardkit/safetensors_torch.hpp>

namespace {
namespace fs = std::filesystem;
namespace st = shardkit::safetensors;

/// Which file of the checkpoint holds `key`, and under which name.
struct Location {
  std::string file;  // relative to the checkpoint folder
  std::string name;
};

Location locate(const std::string& key) {
  if (key.rfind("model.", 0) == 0) return {"pretrained_model/model.safetensors", key.substr(6)};
  if (key.rfind("optimizer.", 0) == 0)
    return {"training_state/optimizer_state.safetensors", key.substr(10)};
  throw shardkit::FormatError("safetensors format: entry '" + key +
                              "' is neither under model. nor optimizer.");
}

class SafetensorsFormat final : public shardkit::CheckpointFormat {
 public:
  void save(const shardkit::ShardedState& state, const std::string& dir,
            const shardkit::Runtime& runtime) override {
    if (!runtime.is_main()) return;  // whole tensors: rank 0 holds everything it writes
    std::map<std::string, std::vector<st::TensorRef>> files;
    std::vector<at::Tensor> keep_alive;
    for (const auto& [key, entry] : state.tensors) {
      if (entry.chunks.size() != 1 || !(entry.chunks[0].box == shardkit::full_box(entry.global_shape)))
        throw shardkit::FormatError("safetensors format writes whole tensors, but '" + key +
                                    "' is sharded on this rank; use --checkpoint_format=dcp");
      const auto where = locate(key);
      keep_alive.push_back(entry.chunks[0].data.detach().to(torch::kCPU).contiguous());
      files[where.file].push_back(st::ref_of(where.name, keep_alive.back()));
    }
    for (const auto& [file, refs] : files)
      st::write_file((fs::path(dir) / file).string(), refs, {{"format", "pt"}});
  }

  void load(shardkit::ShardedState& wanted, const std::string& dir,
            const shardkit::Runtime&) override {
    std::map<std::string, std::unique_ptr<st::File>> open;
    torch::NoGradGuard no_grad;
    for (auto& [key, entry] : wanted.tensors) {
      const auto where = locate(key);
      auto& file = open[where.file];
      const auto path = (fs::path(dir) / where.file).string();
      if (!file) {
        if (!fs::exists(path))
          throw shardkit::FormatError(path + " is missing; the checkpoint is incomplete");
        file = std::make_unique<st::File>(st::File::open(path));
      }
      if (!file->contains(where.name))
        throw shardkit::FormatError(path + " has no tensor '" + where.name + "' (needed for " +
                                    key + "); was it saved with another policy configuration?");
      const auto& view = file->get(where.name);
      if (view.shape != entry.global_shape)
        throw shardkit::FormatError(path + ": tensor '" + where.name + "' has shape " +
                                    c10::str(c10::IntArrayRef(view.shape)) + " but the model expects " +
                                    c10::str(c10::IntArrayRef(entry.global_shape)) +
                                    "; check the policy options (e.g. --policy.hidden_dim)");
      const auto saved = st::to_tensor(view);
      for (auto& chunk : entry.chunks) {
        auto source = saved;
        for (std::size_t d = 0; d < chunk.box.offsets.size(); ++d)
          source = source.narrow(static_cast<int64_t>(d), chunk.box.offsets[d], chunk.box.sizes[d]);
        chunk.data.copy_(source);  // casts when the saved dtype differs
      }
    }
  }

  bool has_model(const std::string& dir) const override {
    return fs::is_regular_file(fs::path(dir) / "pretrained_model/model.safetensors");
  }
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) {
  return std::make_shared<SafetensorsFormat>();
}

}  // namespace

SHARDKIT_PLUGIN(checkpoint_format, safetensors, "0.1.0",
                "Whole tensors in safetensors files (LeRobot's layout)", SHARDKIT_PLUGIN_NO_OPTIONS, make)
