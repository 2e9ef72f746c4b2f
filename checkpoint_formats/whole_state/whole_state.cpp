// Whole-tensor safetensors files of a ShardedState (the `safetensors` and `safetensors_dcp` formats).
#include "shardkit/whole_state.hpp"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/util/StringUtil.h>

#include <filesystem>
#include <map>
#include <memory>

#include "shardkit/gather_whole.hpp"
#include "shardkit/error.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit {
namespace {
namespace fs = std::filesystem;
namespace st = shardkit::safetensors;

/// Which file of the checkpoint holds `key`, and under which name.
struct Location {
  std::string file;  // relative to the checkpoint folder
  std::string name;
};

Location locate(const std::string& key, bool adapter) {
  if (key.rfind("model.", 0) == 0)
    return adapter ? Location{kWholeAdapterFile, kPeftKeyPrefix + key.substr(6)}
                   : Location{kWholeModelFile, key.substr(6)};
  if (key.rfind("ema.", 0) == 0)
    return adapter ? Location{kWholeEmaAdapterFile, kPeftKeyPrefix + key.substr(4)}
                   : Location{kWholeEmaModelFile, key.substr(4)};
  if (key.rfind("optimizer.", 0) == 0) return {kWholeOptimizerFile, key.substr(10)};
  throw FormatError("safetensors format: entry '" + key + "' is not under model., ema. or optimizer.");
}

}  // namespace

namespace {

bool whole_on_this_rank(const StateEntry& entry) {
  return entry.chunks.size() == 1 && entry.chunks[0].box == full_box(entry.global_shape);
}

// Whether every rank of `group` holds every entry under `prefix` whole (one exchange).
bool whole_everywhere(const ShardedState& state, const std::string& prefix, CommGroup& group) {
  bool mine = true;
  for (const auto& [key, entry] : state.tensors)
    if (key.rfind(prefix, 0) == 0 && !whole_on_this_rank(entry)) mine = false;
  for (const auto& answer : group.all_gather_bytes(mine ? "1" : "0"))
    if (answer != "1") return false;
  return true;
}

}  // namespace

void save_whole_state(const ShardedState& state, const std::string& prefix, const std::string& dir,
                      CommGroup* group) {
  std::map<std::string, at::Tensor> tensors;
  if (group != nullptr && group->size() > 1 && !whole_everywhere(state, prefix, *group)) {
    // Sharded entries (fsdp, zero): rank 0 assembles each whole tensor from every rank's boxes.
    tensors = gather_whole_entries(state, prefix, *group);
    if (group->rank() != 0) return;
  } else {
    if (group && group->rank() != 0) return;  // whole tensors: rank 0 holds everything it writes
    for (const auto& [key, entry] : state.tensors) {
      if (key.rfind(prefix, 0) != 0) continue;
      if (!whole_on_this_rank(entry))
        throw FormatError("safetensors format writes whole tensors, but '" + key +
                          "' is sharded in this process and no group was given to gather it");
      tensors[key] = entry.chunks[0].data.detach().to(at::kCPU).contiguous();
    }
  }
  std::map<std::string, std::vector<st::TensorRef>> files;
  for (const auto& [key, tensor] : tensors) {
    const auto where = locate(key, state.model_is_adapter);
    files[where.file].push_back(st::ref_of(where.name, tensor));
  }
  for (const auto& [file, refs] : files)
    st::write_file((fs::path(dir) / file).string(), refs, {{"format", "pt"}});
}

void load_whole_state(ShardedState& wanted, const std::string& prefix, const std::string& dir) {
  std::map<std::string, std::unique_ptr<st::File>> open;
  c10::AutoGradMode no_grad(false);
  for (auto& [key, entry] : wanted.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    const auto where = locate(key, wanted.model_is_adapter);
    auto& file = open[where.file];
    const auto path = (fs::path(dir) / where.file).string();
    if (!file) {
      if (!fs::exists(path)) {
        if (!wanted.model_is_adapter && fs::exists(fs::path(dir) / kWholeAdapterFile))
          throw FormatError(dir + " is a LoRA run's checkpoint: it holds a PEFT adapter (adapter_model.safetensors), "
                            "not full weights; start from its base model with the same --peft.* options, or from "
                            "the merged weights of --peft.merge=true (<output_dir>/merged_model)");
        throw FormatError(path + " is missing; the checkpoint is incomplete");
      }
      file = std::make_unique<st::File>(st::File::open(path));
    }
    if (!file->contains(where.name))
      throw FormatError(path + " has no tensor '" + where.name + "' (needed for " +
                        key + "); was it saved with another policy configuration?");
    const auto& view = file->get(where.name);
    if (view.shape != entry.global_shape)
      throw FormatError(path + ": tensor '" + where.name + "' has shape " +
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

bool has_whole_model(const std::string& dir) {
  return fs::is_regular_file(fs::path(dir) / kWholeModelFile) || fs::is_regular_file(fs::path(dir) / kWholeAdapterFile);
}

}  // namespace shardkit
