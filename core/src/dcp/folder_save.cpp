// dcp::save_folder: every rank writes its items as torch.save blobs, rank 0 writes `.metadata` last.
#include "shardkit/dcp/folder.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <torch/csrc/jit/serialization/pickle.h>

#include "shardkit/comm_support.hpp"
#include "shardkit/dcp/metadata.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "folder_plan.hpp"
#include "object_item.hpp"

namespace shardkit::dcp {
namespace fs = std::filesystem;

std::string data_file_name(int rank) { return "__" + std::to_string(rank) + "_0.distcp"; }

namespace {

// One rank's data file: appended blob by blob, fsynced before its results are shared.
class DataFile {
 public:
  explicit DataFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create");
  }
  ~DataFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  std::int64_t append(const std::vector<char>& bytes) {
    const auto at = size_;
    std::size_t done = 0;
    while (done < bytes.size()) {
      const auto n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write");
      done += static_cast<std::size_t>(n);
    }
    size_ += static_cast<std::int64_t>(bytes.size());
    return at;
  }
  void finish() {
    if (::fsync(fd_) != 0) fail("cannot fsync");
    if (::close(fd_) != 0) fail("cannot close");
    fd_ = -1;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw FormatError("DCP save: " + std::string(what) + " " + path_ + ": " + std::strerror(errno));
  }
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<std::int64_t>(shape[d], 1);
  return strides;
}

// rank 0: the gathered write results as DCP's Metadata, entries in key order.
Metadata build_metadata(const std::vector<WrittenChunk>& chunks, const std::string& dir) {
  Metadata metadata;
  metadata.planner_data.emplace();
  metadata.storage_data.emplace();
  std::map<std::string, std::size_t> entry_of;
  for (const auto& c : chunks) {
    if (c.bytes) {
      if (!entry_of.emplace(c.fqn, metadata.state_dict_metadata.size()).second)
        throw FormatError("DCP save: the byte item '" + c.fqn + "' was written twice");
      metadata.state_dict_metadata.emplace_back(c.fqn, BytesStorageMetadata{});
      metadata.planner_data->emplace_back(c.fqn, planner_path(c.fqn));
      metadata.storage_data->emplace_back(MetadataIndex{c.fqn, std::nullopt, std::nullopt},
                                          StorageInfo{data_file_name(c.rank), c.file_offset, c.length, std::nullopt});
      continue;
    }
    auto [it, added] = entry_of.emplace(c.fqn, metadata.state_dict_metadata.size());
    if (added) {
      TensorStorageMetadata tensor;
      tensor.properties.dtype = c.dtype;
      tensor.properties.strides = contiguous_strides(c.global_shape);
      tensor.size = c.global_shape;
      metadata.state_dict_metadata.emplace_back(c.fqn, tensor);
      metadata.planner_data->emplace_back(c.fqn, planner_path(c.fqn));
    }
    auto* entry = std::get_if<TensorStorageMetadata>(&metadata.state_dict_metadata[it->second].second);
    if (entry == nullptr) throw FormatError("DCP save: '" + c.fqn + "' is both a tensor and a byte item");
    auto& tensor = *entry;
    MetadataIndex index{c.fqn, c.offsets, static_cast<std::int64_t>(tensor.chunks.size())};
    tensor.chunks.push_back({c.offsets, c.sizes});
    metadata.storage_data->emplace_back(index, StorageInfo{data_file_name(c.rank), c.file_offset, c.length, std::nullopt});
  }
  StorageMeta storage;
  storage.checkpoint_id = fs::absolute(dir).lexically_normal().string();
  metadata.storage_meta = storage;
  metadata.version = std::string(kDcpVersion);
  return metadata;
}

// Test-only: SHARDKIT_TEST_DCP_KILL="<rank>:<n>" kills rank <rank> with SIGKILL on its n-th
// save_folder call, after its data file is durable and before the gather (and so before
// `.metadata`): the crash-safety test's moment of death.
void maybe_die_for_test(int rank) {
  static int calls = 0;
  ++calls;
  const char* spec = std::getenv("SHARDKIT_TEST_DCP_KILL");
  if (spec == nullptr) return;
  int victim = -1, nth = -1;
  if (std::sscanf(spec, "%d:%d", &victim, &nth) == 2 && victim == rank && nth == calls)
    ::kill(::getpid(), SIGKILL);
}

}  // namespace

void save_folder(const ShardedState& state, const std::string& prefix, const std::string& dir,
                 CommGroup* group) {
  const auto alone = group ? nullptr : make_local_group("dcp");
  CommGroup& world = group ? *group : *alone;
  make_directories(dir);
  const int rank = world.rank();
  std::vector<WrittenChunk> mine;
  {
    DataFile file((fs::path(dir) / data_file_name(rank)).string());
    for (const auto& [key, entry] : state.tensors) {
      if (key.rfind(prefix, 0) != 0) continue;
      if (!entry.replicas.saved_here()) continue;  // one copy of identical data is written
      for (const auto& chunk : entry.chunks) {
        // A clone: torch.save of a view would store its whole underlying storage.
        const auto data = chunk.data.detach().to(torch::kCPU).contiguous().clone();
        const auto blob = torch::jit::pickle_save(data);
        WrittenChunk written{key, dcp_dtype(entry.dtype), entry.global_shape, chunk.box.offsets,
                             chunk.box.sizes, rank, 0, static_cast<std::int64_t>(blob.size())};
        written.file_offset = file.append(blob);
        mine.push_back(std::move(written));
      }
    }
    for (const auto& [key, value] : state.objects) {
      if (key.rfind(prefix, 0) != 0 || rank != 0) continue;  // every rank holds the same values
      const auto blob = encode_object(value);
      WrittenChunk written{key, "", {}, {}, {}, rank, 0, static_cast<std::int64_t>(blob.size()), true};
      written.file_offset = file.append(blob);
      mine.push_back(std::move(written));
    }
    file.finish();
  }
  maybe_die_for_test(rank);
  // The gather is the barrier: once rank 0 has every rank's results, every data file is durable.
  const auto all = world.all_gather_bytes(encode_written(mine));
  if (rank != 0) return;
  std::vector<WrittenChunk> chunks;
  for (const auto& text : all) {
    auto decoded = decode_written(text);
    chunks.insert(chunks.end(), decoded.begin(), decoded.end());
  }
  write_text_file((fs::path(dir) / ".metadata").string(), write_metadata(build_metadata(chunks, dir)));
}

void save_checkpoint(const ShardedState& state, const std::string& dir, CommGroup* world) {
  save_folder(state, "model.", (fs::path(dir) / kModelFolder).string(), world);
  save_folder(state, "optimizer.", (fs::path(dir) / kOptimizerFolder).string(), world);
}

bool has_checkpoint_model(const std::string& dir) { return is_folder((fs::path(dir) / kModelFolder).string()); }

bool is_folder(const std::string& dir) { return fs::is_regular_file(fs::path(dir) / ".metadata"); }

}  // namespace shardkit::dcp
