// dcp::load_folder: each wanted box assembled from the saved chunks that overlap it, every range checked.
#include "shardkit/dcp/folder.hpp"

#include <filesystem>
#include <map>

#include <torch/types.h>

#include "shardkit/dcp/metadata.hpp"
#include "shardkit/ema_entries.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "folder_plan.hpp"
#include "item_reader.hpp"
#include "object_item.hpp"

namespace shardkit::dcp {
namespace fs = std::filesystem;
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// "<p>.param_groups.<first parameter>.<field>", the per-parameter spelling of param-group key
// "<p>.param_groups.<index>.<field>" (StateDictOptions(flatten_optimizer_state_dict=True)),
// or "" when `key` is not a param-group key or `objects` does not name the group's parameters.
std::string per_parameter_key(const std::string& key, const std::map<std::string, ObjectValue>& objects) {
  const auto groups = key.find(".param_groups.");
  if (groups == std::string::npos) return "";
  const auto index_at = groups + 14, field_at = key.find('.', index_at);
  if (field_at == std::string::npos) return "";
  const auto head = key.substr(0, index_at);
  const auto params = objects.find(head + key.substr(index_at, field_at - index_at) + ".params");
  if (params == objects.end()) return "";
  const auto* names = std::get_if<std::vector<std::string>>(&params->second);
  if (names == nullptr || names->empty()) return "";
  return head + names->front() + key.substr(field_at);
}

// The part of `tensor` (which holds `box`) that lies in `part`.
at::Tensor slice(const at::Tensor& tensor, const Box& box, const Box& part) {
  auto view = tensor;
  for (std::size_t d = 0; d < part.offsets.size(); ++d)
    view = view.narrow(static_cast<std::int64_t>(d), part.offsets[d] - box.offsets[d], part.sizes[d]);
  return view;
}

}  // namespace

struct FolderReader::Impl {
  std::string dir;
  std::string meta_path;
  Metadata metadata;
  std::map<std::pair<std::string, std::vector<std::int64_t>>, const StorageInfo*> stored;
  std::map<std::string, const StorageInfo*> byte_items;
  ItemReader reader;

  void load_objects(ShardedState& wanted, const std::string& prefix);

  explicit Impl(const std::string& folder)
      : dir(folder), meta_path((fs::path(folder) / ".metadata").string()), reader(folder) {
    if (!fs::is_regular_file(meta_path))
      throw FormatError(meta_path + " is missing: " + dir + " is not a complete DCP checkpoint");
    metadata = read_metadata(read_text_file(meta_path), meta_path);
    if (!metadata.storage_data) return;
    for (const auto& [index, info] : *metadata.storage_data) {
      if (index.offset) stored[{index.fqn, *index.offset}] = &info;
      else byte_items[index.fqn] = &info;
    }
  }
};

FolderReader::FolderReader(const std::string& dir) : impl_(std::make_unique<Impl>(dir)) {}
FolderReader::~FolderReader() = default;
const Metadata& FolderReader::metadata() const { return impl_->metadata; }

void FolderReader::load(ShardedState& wanted, const std::string& prefix) {
  const auto& meta_path = impl_->meta_path;
  const auto& dir = impl_->dir;
  torch::NoGradGuard no_grad;
  for (auto& [key, entry] : wanted.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    const auto* found = impl_->metadata.find(key);
    if (found == nullptr)
      throw FormatError(meta_path + " has no entry '" + key +
                        "'; was the checkpoint saved with another policy configuration?");
    const auto* saved = std::get_if<TensorStorageMetadata>(found);
    if (saved == nullptr) throw FormatError(meta_path + ": entry '" + key + "' is not a tensor");
    if (saved->size != entry.global_shape)
      throw FormatError(meta_path + ": entry '" + key + "' has shape " + shape_text(saved->size) +
                        " but the model expects " + shape_text(entry.global_shape) +
                        "; check the policy options (e.g. --policy.hidden_dim)");
    std::map<std::size_t, at::Tensor> read;  // saved chunk -> its data, read once per entry
    for (auto& chunk : entry.chunks) {
      std::int64_t covered = 0;
      std::vector<Box> parts;  // what each saved chunk gave; pairwise disjoint or refused
      for (std::size_t i = 0; i < saved->chunks.size(); ++i) {
        const Box box{saved->chunks[i].offsets, saved->chunks[i].sizes};
        Box overlap;
        if (!intersect(chunk.box, box, overlap) || overlap.numel() == 0) continue;
        for (const auto& part : parts) {
          Box both;
          if (intersect(part, overlap, both) && both.numel() > 0)
            throw FormatError(meta_path + ": saved chunks of '" + key + "' at " +
                              shape_text(part.offsets) + " and " + shape_text(box.offsets) +
                              " overlap; the metadata is inconsistent");
        }
        parts.push_back(overlap);
        auto& data = read[i];
        if (!data.defined()) {
          const auto it = impl_->stored.find({key, box.offsets});
          if (it == impl_->stored.end())
            throw FormatError(meta_path + ": chunk " + shape_text(box.offsets) + " of '" + key +
                              "' has no storage entry");
          data = impl_->reader.tensor(*it->second, key);
          if (data.sizes() != c10::IntArrayRef(box.sizes))
            throw FormatError(dir + ": the item of '" + key + "' at " + shape_text(box.offsets) +
                              " holds a tensor of shape " + shape_text(data.sizes().vec()) +
                              ", the metadata says " + shape_text(box.sizes));
        }
        const auto source = slice(data, box, overlap);
        ItemReader::prefetch(source);
        slice(chunk.data, chunk.box, overlap).copy_(source);  // casts dtypes
        covered += overlap.numel();
      }
      if (covered != chunk.box.numel())
        throw FormatError(meta_path + ": the saved chunks of '" + key + "' cover " +
                          std::to_string(covered) + " of the " + std::to_string(chunk.box.numel()) +
                          " elements wanted at " + shape_text(chunk.box.offsets) + " (they leave holes)");
    }
  }
  impl_->load_objects(wanted, prefix);
}

void FolderReader::Impl::load_objects(ShardedState& wanted, const std::string& prefix) {
  std::map<std::string, ObjectValue> found;
  for (const auto& [key, value] : wanted.objects) {
    if (key.rfind(prefix, 0) != 0) continue;
    auto it = byte_items.find(key);
    if (it == byte_items.end()) it = byte_items.find(per_parameter_key(key, wanted.objects));
    if (it == byte_items.end()) continue;
    found[key] = decode_object(reader.bytes(*it->second, key), dir + ": the byte item '" + it->first + "'");
  }
  for (auto it = wanted.objects.begin(); it != wanted.objects.end();) {
    if (it->first.rfind(prefix, 0) != 0) {
      ++it;
    } else if (auto f = found.find(it->first); f != found.end()) {
      it->second = f->second;
      ++it;
    } else {
      it = wanted.objects.erase(it);
    }
  }
}

void load_folder(ShardedState& wanted, const std::string& prefix, const std::string& dir) {
  FolderReader(dir).load(wanted, prefix);
}

void load_checkpoint(ShardedState& wanted, const std::string& dir) {
  load_folder(wanted, "model.", (fs::path(dir) / kModelFolder).string());
  if (!wanted.keys_with_prefix("optimizer.").empty())
    load_folder(wanted, "optimizer.", (fs::path(dir) / kOptimizerFolder).string());
  if (!wanted.keys_with_prefix("ema.").empty()) {
    auto ema = renamed_entries(wanted, "ema.", "model.");  // shares wanted's tensors: loading fills them
    load_folder(ema, "model.", (fs::path(dir) / kEmaModelFolder).string());
  }
}

at::ScalarType scalar_type_of(const std::string& dcp_dtype_name) {
  for (int i = 0; i < static_cast<int>(at::ScalarType::NumOptions); ++i) {
    const auto type = static_cast<at::ScalarType>(i);
    try {
      if (dcp_dtype(type) == dcp_dtype_name) return type;
    } catch (const FormatError&) {
      // a LibTorch dtype DCP has no name for
    }
  }
  throw FormatError("DCP dtype '" + dcp_dtype_name + "' has no LibTorch type");
}

}  // namespace shardkit::dcp
