// dcp::load_folder: each wanted box assembled from the saved chunks that overlap it, every range checked.
#include "shardkit/dcp/folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include <torch/csrc/jit/serialization/pickle.h>

#include "shardkit/dcp/metadata.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "folder_plan.hpp"

namespace shardkit::dcp {
namespace fs = std::filesystem;
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The items of one folder's data files, read by byte range (and checked against the file).
class ItemReader {
 public:
  explicit ItemReader(std::string dir) : dir_(std::move(dir)) {}
  ~ItemReader() {
    for (auto& [name, file] : files_) ::close(file.fd);
  }
  ItemReader(const ItemReader&) = delete;
  ItemReader& operator=(const ItemReader&) = delete;

  at::Tensor tensor(const StorageInfo& info, const std::string& key) {
    const auto path = (fs::path(dir_) / info.relative_path).string();
    const auto where = path + " (item of '" + key + "' at bytes " + std::to_string(info.offset) +
                       ".." + std::to_string(info.offset + info.length) + ")";
    if (info.relative_path.empty() || info.relative_path.find('/') != std::string::npos ||
        info.relative_path == "." || info.relative_path == "..")
      throw FormatError(dir_ + "/.metadata: item of '" + key + "' names the file '" +
                        info.relative_path + "', which is not a file of this folder");
    if (info.transform_descriptors && !info.transform_descriptors->empty())
      throw FormatError(where + ": stored with transforms (" + info.transform_descriptors->front() +
                        "), which shardkit does not read; save without extensions");
    const auto& file = open(path);
    if (info.offset < 0 || info.length < 0 || info.offset > file.size ||
        info.length > file.size - info.offset)
      throw FormatError(where + ": outside the file, which has " + std::to_string(file.size) +
                        " bytes; the checkpoint is truncated or its metadata is wrong");
    std::vector<char> bytes(static_cast<std::size_t>(info.length));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const auto n = ::pread(file.fd, bytes.data() + done, bytes.size() - done,
                             static_cast<off_t>(info.offset + static_cast<std::int64_t>(done)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw FormatError(where + ": cannot read: " + std::strerror(n < 0 ? errno : EIO));
      done += static_cast<std::size_t>(n);
    }
    c10::IValue value;
    try {
      value = torch::jit::pickle_load(bytes);
    } catch (const std::exception& e) {
      throw FormatError(where + ": not a torch.save tensor (" + first_line(e.what()) + ")");
    }
    if (!value.isTensor()) throw FormatError(where + ": holds a " + value.tagKind() + ", not a tensor");
    return value.toTensor();
  }

 private:
  struct OpenFile {
    int fd = -1;
    std::int64_t size = 0;
  };
  static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

  const OpenFile& open(const std::string& path) {
    auto it = files_.find(path);
    if (it != files_.end()) return it->second;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw FormatError(path + " is missing or unreadable (" + std::strerror(errno) +
                        "); the checkpoint is incomplete");
    struct stat st {};
    ::fstat(fd, &st);
    return files_.emplace(path, OpenFile{fd, static_cast<std::int64_t>(st.st_size)}).first->second;
  }

  std::string dir_;
  std::map<std::string, OpenFile> files_;
};

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
  ItemReader reader;

  explicit Impl(const std::string& folder)
      : dir(folder), meta_path((fs::path(folder) / ".metadata").string()), reader(folder) {
    if (!fs::is_regular_file(meta_path))
      throw FormatError(meta_path + " is missing: " + dir + " is not a complete DCP checkpoint");
    metadata = read_metadata(read_text_file(meta_path), meta_path);
    if (metadata.storage_data)
      for (const auto& [index, info] : *metadata.storage_data)
        if (index.offset) stored[{index.fqn, *index.offset}] = &info;
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
        slice(chunk.data, chunk.box, overlap).copy_(slice(data, box, overlap));  // casts dtypes
        covered += overlap.numel();
      }
      if (covered != chunk.box.numel())
        throw FormatError(meta_path + ": the saved chunks of '" + key + "' cover " +
                          std::to_string(covered) + " of the " + std::to_string(chunk.box.numel()) +
                          " elements wanted at " + shape_text(chunk.box.offsets) + " (they leave holes)");
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
