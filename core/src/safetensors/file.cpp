// safetensors::File: maps a file read-only, validates it, and hands out views of its tensors.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "format_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit::safetensors {

File File::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw FormatError(path + ": cannot open safetensors file: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw FormatError(path + ": cannot stat safetensors file: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FormatError(path + ": not a regular file; give the path of a .safetensors file");
  }
  File file;
  file.path_ = path;
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > 0) {  // mmap refuses empty ranges; an empty file fails validation below
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw FormatError(path + ": cannot memory-map safetensors file: " + std::strerror(err));
    }
    file.map_ = map;
    file.map_size_ = size;
  }
  ::close(fd);  // the mapping keeps the file alive
  static const std::uint8_t kEmpty = 0;
  file.load(file.map_ ? static_cast<const std::uint8_t*>(file.map_) : &kEmpty, size);
  return file;
}

File File::from_bytes(std::vector<std::uint8_t> bytes, std::string name) {
  File file;
  file.path_ = std::move(name);
  file.owned_ = std::move(bytes);
  file.load(file.owned_.data(), file.owned_.size());
  return file;
}

void File::load(const std::uint8_t* bytes, std::size_t size) {
  detail::Header header = detail::parse_header(bytes, size, path_);
  const std::uint8_t* data = bytes + header.data_start;
  names_.reserve(header.entries.size());
  tensors_.reserve(header.entries.size());
  for (detail::Entry& e : header.entries) {
    names_.push_back(e.name);
    tensors_[e.name] = TensorView{e.dtype, std::move(e.shape), data + e.begin,
                                  static_cast<std::size_t>(e.end - e.begin)};
  }
  metadata_ = std::move(header.metadata);
}

File::File(File&& other) noexcept
    : path_(std::move(other.path_)),
      owned_(std::move(other.owned_)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      names_(std::move(other.names_)),
      tensors_(std::move(other.tensors_)),
      metadata_(std::move(other.metadata_)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    owned_ = std::move(other.owned_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    names_ = std::move(other.names_);
    tensors_ = std::move(other.tensors_);
    metadata_ = std::move(other.metadata_);
  }
  return *this;
}

File::~File() { release(); }

void File::release() noexcept {
  if (map_) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

bool File::contains(const std::string& name) const { return tensors_.count(name) != 0; }

const TensorView& File::get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    std::string some;
    for (std::size_t i = 0; i < names_.size() && i < 3; ++i) {
      some += (i ? ", '" : " (e.g. '") + names_[i] + "'";
    }
    if (names_.size() > 3) some += ", ...";
    if (!some.empty()) some += ")";
    throw FormatError(path_ + ": no tensor named '" + name + "'; the file holds " +
                      std::to_string(names_.size()) + " tensors" + some);
  }
  return it->second;
}

}  // namespace shardkit::safetensors
