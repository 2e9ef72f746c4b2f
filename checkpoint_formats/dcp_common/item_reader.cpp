// DCP items read from memory-mapped data files: torch.save blobs unpickled in place, their
// storages pointing into the mapping (no copy of a whole item, only the pages used are read).
#include "item_reader.hpp"

#include "shardkit/error_text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include "shardkit/error.hpp"

namespace shardkit::dcp {
namespace fs = std::filesystem;

// One data file mapped read-only for as long as a tensor views it.
struct ItemReader::Mapping {
  const char* data = nullptr;
  std::int64_t size = 0;
  ~Mapping() {
    if (data != nullptr) ::munmap(const_cast<char*>(data), static_cast<std::size_t>(size));
  }
};

namespace {

// One item's bytes as the zip reader's input.
class ItemAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  ItemAdapter(const char* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t size() const override { return size_; }
  std::size_t read(std::uint64_t pos, void* buf, std::size_t n, const char*) const override {
    if (pos >= size_) return 0;
    n = std::min<std::size_t>(n, size_ - pos);
    std::memcpy(buf, data_ + pos, n);
    return n;
  }

 private:
  const char* data_;
  std::size_t size_;
};

// The number of bytes `t` reaches into its storage from its storage offset, or from the
// storage's start with `from_storage` (0 for an empty tensor).
std::int64_t bytes_spanned(const at::Tensor& t, bool from_storage = false) {
  if (t.numel() == 0) return 0;
  std::int64_t last = from_storage ? t.storage_offset() : 0;
  for (std::int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return (last + 1) * static_cast<std::int64_t>(t.element_size());
}

}  // namespace

ItemReader::ItemReader(std::string dir) : dir_(std::move(dir)) {}
ItemReader::~ItemReader() = default;

const char* ItemReader::item(const StorageInfo& info, const std::string& key,
                             std::shared_ptr<Mapping>& file, std::string& where) {
  const auto path = (fs::path(dir_) / info.relative_path).string();
  where = path + " (item of '" + key + "' at bytes " + std::to_string(info.offset) + ".." +
          std::to_string(info.offset + info.length) + ")";
  if (info.relative_path.empty() || info.relative_path.find('/') != std::string::npos ||
      info.relative_path == "." || info.relative_path == "..")
    throw FormatError(dir_ + "/.metadata: item of '" + key + "' names the file '" + info.relative_path +
                      "', which is not a file of this folder");
  if (info.transform_descriptors && !info.transform_descriptors->empty())
    throw FormatError(where + ": stored with transforms (" + info.transform_descriptors->front() +
                      "), which shardkit does not read; save without extensions");
  auto& mapped = files_[path];
  if (!mapped) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw FormatError(path + " is missing or unreadable (" + std::strerror(errno) +
                        "); the checkpoint is incomplete");
    struct stat st {};
    auto m = std::make_shared<Mapping>();
    if (::fstat(fd, &st) == 0) m->size = static_cast<std::int64_t>(st.st_size);
    if (m->size > 0) {
      void* at = ::mmap(nullptr, static_cast<std::size_t>(m->size), PROT_READ, MAP_SHARED, fd, 0);
      const int error = errno;
      ::close(fd);
      if (at == MAP_FAILED) throw FormatError(path + ": cannot map it into memory: " + std::strerror(error));
      m->data = static_cast<const char*>(at);
      // No readahead around page faults (8 MiB windows on some disks): prefetch() asks for
      // exactly the ranges a load copies.
      ::madvise(at, static_cast<std::size_t>(m->size), MADV_RANDOM);
    } else {
      ::close(fd);
    }
    mapped = std::move(m);
  }
  file = mapped;
  if (info.offset < 0 || info.length < 0 || info.offset > file->size || info.length > file->size - info.offset)
    throw FormatError(where + ": outside the file, which has " + std::to_string(file->size) +
                      " bytes; the checkpoint is truncated or its metadata is wrong");
  return file->data + info.offset;
}

at::Tensor ItemReader::tensor(const StorageInfo& info, const std::string& key) {
  std::shared_ptr<Mapping> file;
  std::string where;
  const char* blob = item(info, key, file, where);
  const auto length = static_cast<std::size_t>(info.length);
  c10::IValue value;
  std::map<std::string, std::int64_t> record_size;  // storage record -> bytes it has
  try {
    caffe2::serialize::PyTorchStreamReader zip(std::make_shared<ItemAdapter>(blob, length));
    auto [pickle, pickle_size] = zip.getRecord("data.pkl");
    std::size_t done = 0;
    auto read_pickle = [&, data = static_cast<const char*>(pickle.get())](char* out, std::size_t n) {
      n = std::min(n, pickle_size - done);
      std::memcpy(out, data + done, n);
      done += n;
      return n;
    };
    auto read_record = [&](const std::string& name) {
      const auto record = "data/" + name;
      const auto offset = zip.getRecordOffset(record);
      const auto size = zip.getRecordSize(record);
      if (offset > length || size > length - offset)
        throw FormatError(where + ": its storage record '" + record + "' lies outside the item");
      record_size[name] = static_cast<std::int64_t>(size);
      auto keep = new std::shared_ptr<Mapping>(file);  // the mapping lives as long as the storage
      return at::DataPtr(const_cast<char*>(blob + offset), keep,
                         [](void* p) { delete static_cast<std::shared_ptr<Mapping>*>(p); }, at::kCPU);
    };
    torch::jit::Unpickler unpickler(read_pickle, nullptr, nullptr, read_record, std::nullopt);
    unpickler.set_version(zip.version());
    value = unpickler.parse_ivalue();
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError(where + ": not a torch.save tensor (" + first_line(e.what()) + ")");
  }
  if (!value.isTensor()) throw FormatError(where + ": holds a " + value.tagKind() + ", not a tensor");
  auto t = value.toTensor();
  std::int64_t available = 0;
  for (const auto& [name, size] : record_size) available = std::max(available, size);
  if (record_size.size() > 1 || static_cast<std::int64_t>(t.storage().nbytes()) > available ||
      bytes_spanned(t, /*from_storage=*/true) > static_cast<std::int64_t>(t.storage().nbytes()))
    throw FormatError(where + ": the tensor's storage (" + std::to_string(t.storage().nbytes()) +
                      " bytes) does not fit its record (" + std::to_string(available) + " bytes)");
  return t;
}

void ItemReader::prefetch(const at::Tensor& view) {
  const auto span = bytes_spanned(view);
  if (span == 0) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(view.data_ptr()) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(view.data_ptr()) + static_cast<std::uintptr_t>(span);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);  // a hint: errors do not matter
}

std::vector<char> ItemReader::bytes(const StorageInfo& info, const std::string& key) {
  std::shared_ptr<Mapping> file;
  std::string where;
  const char* blob = item(info, key, file, where);
  return {blob, blob + info.length};
}

}  // namespace shardkit::dcp
