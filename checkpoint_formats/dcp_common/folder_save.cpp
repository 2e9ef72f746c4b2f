// dcp::save_folder: every rank writes its items as torch.save blobs, rank 0 writes `.metadata` last;
// a failure on any rank fails the save on every rank.
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
#include <utility>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "shardkit/comm_support.hpp"
#include "shardkit/dcp/metadata.hpp"
#include "shardkit/ema_entries.hpp"
#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/files.hpp"
#include "shardkit/publish_file.hpp"
#include "folder_plan.hpp"
#include "object_item.hpp"

namespace shardkit::dcp {
namespace fs = std::filesystem;

std::string data_file_name(int rank) { return "__" + std::to_string(rank) + "_0.distcp"; }

namespace {

// One rank's data file: appended blob by blob (small pieces gathered in a buffer, large ones
// written straight from their memory), fsynced before its results are shared.
//
// append() never throws. LibTorch's PyTorchStreamWriter calls it from inside miniz; an
// exception there leaves the writer's position ahead of miniz's, and the writer's destructor,
// which finishes an unfinished archive while the exception unwinds, then throws "unexpected
// pos" from a destructor: std::terminate, SIGABRT. So the first failure (a full disk) is kept,
// later bytes are dropped, and check() reports it once the writer is done with the blob.
class DataFile {
 public:
  explicit DataFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw FormatError(describe("cannot create", errno));
    behind_ = WriteBehind(fd_, 0);
    buffer_.reserve(kBuffer);  // append() then never allocates
  }
  ~DataFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  std::int64_t size() const { return size_; }
  void append(const void* data, std::size_t n) noexcept {
    size_ += static_cast<std::int64_t>(n);
    if (error_ != 0) return;
    const auto* bytes = static_cast<const char*>(data);
    if (buffer_.size() + n <= kBuffer) {
      buffer_.insert(buffer_.end(), bytes, bytes + n);
      return;
    }
    flush();
    if (n < kBuffer) buffer_.insert(buffer_.end(), bytes, bytes + n);
    else write_all(bytes, n);
  }
  /// Appends `bytes`; returns the offset it starts at.
  std::int64_t append(const std::vector<char>& bytes) {
    const auto at = size_;
    append(bytes.data(), bytes.size());
    return at;
  }
  /// Throws FormatError naming the file and the system's reason when a write failed.
  void check() const {
    if (error_ != 0) throw FormatError(describe("cannot write", error_));
  }
  void finish() {
    flush();
    check();
    if (::fsync(fd_) != 0) throw FormatError(describe("cannot fsync", errno));
    const int fd = std::exchange(fd_, -1);  // closed even when close() reports an error
    if (::close(fd) != 0) throw FormatError(describe("cannot close", errno));
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{1} << 20;
  void flush() noexcept {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_all(const char* bytes, std::size_t n) noexcept {
    // Counted for the whole file, so that blobs gathered in the buffer are handed to the disk
    // every kWriteBehindPiece as large writes are.
    if (error_ == 0) error_ = write_fully(fd_, bytes, n, &behind_);
  }
  std::string describe(const char* what, int err) const {
    return "DCP save: " + std::string(what) + " " + path_ + ": " + std::strerror(err);
  }
  std::string path_;
  int fd_ = -1;
  int error_ = 0;  ///< errno of the first failed write; 0 while every write succeeded
  std::int64_t size_ = 0;
  WriteBehind behind_{-1, 0};  ///< the file's write-behind, from its first byte
  std::vector<char> buffer_;
};

/// The tensor torch.save should store for `data`: itself when it owns exactly its storage
/// (torch.save of a view would store the whole underlying storage), else a compact copy.
torch::Tensor exact_storage(const torch::Tensor& data) {
  auto t = data.detach().to(torch::kCPU).contiguous();
  const auto bytes = static_cast<std::size_t>(t.numel()) * t.element_size();
  if (t.storage_offset() == 0 && t.storage().nbytes() == bytes) return t;
  return t.clone();
}

/// Appends `tensor` as torch.save writes it (the bytes torch::jit::pickle_save returns),
/// streamed into `file` without copying the tensor's data. Returns the item's length.
std::int64_t append_torch_save(DataFile& file, const torch::Tensor& tensor) {
  const auto start = file.size();
  std::vector<char> pickled;
  torch::jit::Pickler pickler([&](const char* bytes, size_t n) { pickled.insert(pickled.end(), bytes, bytes + n); });
  pickler.protocol();
  pickler.pushIValue(tensor);
  pickler.stop();
  caffe2::serialize::PyTorchStreamWriter writer([&file](const void* bytes, size_t n) -> size_t {
    file.append(bytes, n);  // never throws: a failed write is reported by file.check() below
    return n;
  });
  try {
    torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  } catch (...) {
    // ~PyTorchStreamWriter finishes an unfinished archive, and a second error there would be
    // thrown from a destructor (std::terminate): finish it here, where that error can give way
    // to the first. writeEndOfFile() marks the writer finished even when it throws.
    if (!writer.finalized()) {
      try {
        writer.writeEndOfFile();
      } catch (...) {
      }
    }
    throw;
  }
  file.check();
  return file.size() - start;
}

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

// What a rank tells the others after each step of a save: done (with its results), or why
// not. Every rank then gives up together when any failed, instead of some going on to the
// next collective while the one that failed has left.
constexpr char kDone = 'D', kFailed = 'F';

std::string report_done(const std::string& results) { return kDone + results; }
std::string report_failed(const std::exception& error) {
  const auto text = one_line_message(error);
  return kFailed + (text.empty() ? std::string("an error without a message") : text);
}

/// Throws FormatError with the first failure among every rank's `reports`, on every rank.
void give_up_on_any_failure(const std::vector<std::string>& reports) {
  for (const auto& report : reports)
    if (report.empty() || report[0] != kDone)
      throw FormatError(report.empty() ? std::string("DCP save: a rank sent no report") : report.substr(1));
}

// Writes and fsyncs this rank's data file in `dir`; returns what it wrote where.
std::vector<WrittenChunk> write_data_file(const ShardedState& state, const std::string& prefix,
                                          const std::string& dir, int rank) {
  make_directories(dir);
  std::vector<WrittenChunk> mine;
  DataFile file((fs::path(dir) / data_file_name(rank)).string());
  for (const auto& [key, entry] : state.tensors) {
    if (key.rfind(prefix, 0) != 0) continue;
    if (!entry.replicas.saved_here()) continue;  // one copy of identical data is written
    for (const auto& chunk : entry.chunks) {
      WrittenChunk written{key, dcp_dtype(entry.dtype), entry.global_shape, chunk.box.offsets,
                           chunk.box.sizes, rank, file.size(), 0};
      written.length = append_torch_save(file, exact_storage(chunk.data));
      mine.push_back(std::move(written));
    }
  }
  for (const auto& [key, value] : state.objects) {
    if (key.rfind(prefix, 0) != 0 || rank != 0) continue;  // every rank holds the same values
    const auto blob = encode_object(value);
    WrittenChunk written{key, "", {}, {}, {}, rank, 0, static_cast<std::int64_t>(blob.size()), true};
    written.file_offset = file.append(blob);
    file.check();
    mine.push_back(std::move(written));
  }
  file.finish();
  return mine;
}

}  // namespace

void save_folder(const ShardedState& state, const std::string& prefix, const std::string& dir,
                 CommGroup* group) {
  const auto alone = group ? nullptr : make_local_group("dcp");
  CommGroup& world = group ? *group : *alone;
  const int rank = world.rank();
  std::string mine;
  try {
    mine = report_done(encode_written(write_data_file(state, prefix, dir, rank)));
  } catch (const std::exception& e) {
    mine = report_failed(e);
  }
  maybe_die_for_test(rank);
  // The gather is the barrier: once rank 0 has every rank's results, every data file is durable.
  const auto all = world.all_gather_bytes(mine);
  give_up_on_any_failure(all);
  std::string metadata = report_done("");
  if (rank == 0) {
    try {
      std::vector<WrittenChunk> chunks;
      for (const auto& text : all) {
        auto decoded = decode_written(text.substr(1));
        chunks.insert(chunks.end(), decoded.begin(), decoded.end());
      }
      write_text_file((fs::path(dir) / ".metadata").string(), write_metadata(build_metadata(chunks, dir)));
    } catch (const std::exception& e) {
      metadata = report_failed(e);
    }
  }
  // Rank 0's word on `.metadata`: a folder without it is every rank's failure.
  give_up_on_any_failure(world.all_gather_bytes(metadata));
}

void save_checkpoint(const ShardedState& state, const std::string& dir, CommGroup* world) {
  save_folder(state, "model.", (fs::path(dir) / kModelFolder).string(), world);
  save_folder(state, "optimizer.", (fs::path(dir) / kOptimizerFolder).string(), world);
  // Keyed as a model folder, so that pretrained_model_ema/ loads as pretrained_model/ does.
  if (!state.keys_with_prefix("ema.").empty())
    save_folder(renamed_entries(state, "ema.", "model."), "model.", (fs::path(dir) / kEmaModelFolder).string(), world);
}

bool has_checkpoint_model(const std::string& dir) { return is_folder((fs::path(dir) / kModelFolder).string()); }

bool is_folder(const std::string& dir) { return fs::is_regular_file(fs::path(dir) / ".metadata"); }

}  // namespace shardkit::dcp
