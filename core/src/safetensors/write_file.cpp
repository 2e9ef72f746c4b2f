// safetensors::write_file: the header then the tensor bytes in large writes, fsync, rename.
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>

#include "format_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit::safetensors {

namespace {

// Linux moves at most this much per write call; asking for more just returns short.
constexpr std::size_t kMaxChunk = 0x7ffff000;

[[noreturn]] void io_fail(const std::string& path, const std::string& what, int err) {
  throw RuntimeError(path + ": " + what + ": " + std::strerror(err));
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Writes every byte of `pieces` with writev, IOV_MAX pieces per call, resuming after
// short writes and EINTR.
void write_all(int fd, std::vector<iovec> pieces, const std::string& path) {
  std::size_t first = 0;
  while (first < pieces.size()) {
    const int count = static_cast<int>(std::min<std::size_t>(pieces.size() - first, IOV_MAX));
    const ssize_t written = ::writev(fd, pieces.data() + first, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      io_fail(path, "cannot write safetensors data", errno);
    }
    auto left = static_cast<std::size_t>(written);
    while (first < pieces.size() && left >= pieces[first].iov_len) {
      left -= pieces[first].iov_len;
      ++first;
    }
    if (left > 0) {
      pieces[first].iov_base = static_cast<char*>(pieces[first].iov_base) + left;
      pieces[first].iov_len -= left;
    }
  }
}

// The pieces to write, each at most kMaxChunk bytes, empty tensors left out.
std::vector<iovec> pieces_of(const detail::Prepared& prepared) {
  std::vector<iovec> pieces;
  auto add = [&pieces](const void* data, std::size_t size) {
    auto* bytes = static_cast<char*>(const_cast<void*>(data));
    for (std::size_t done = 0; done < size; done += kMaxChunk) {
      pieces.push_back(iovec{bytes + done, std::min(kMaxChunk, size - done)});
    }
  };
  add(prepared.head.data(), prepared.head.size());
  for (const TensorRef* t : prepared.order) add(t->data, t->nbytes);
  return pieces;
}

}  // namespace

namespace {

// A sibling temporary then rename, as the reference does: a File still mapping the old
// `path` keeps its bytes, and no reader ever sees a half-written file. `write_body`
// writes everything into the open temporary file.
void write_durably(const std::string& path, const std::function<void(int fd, const std::string& temp)>& write_body) {
  static std::atomic<unsigned> counter{0};
  const std::string temp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) io_fail(temp, "cannot create temporary safetensors file", errno);
  try {
    write_body(fd, temp);
    if (::fsync(fd) != 0) io_fail(temp, "cannot fsync safetensors file", errno);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail(temp, "cannot close safetensors file", err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail(path, "cannot rename " + temp + " into place", err);
  }
  // Make the rename itself durable; a failure here loses nothing already written.
  const int dir = ::open(parent_dir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace

void write_file(const std::string& path, const std::vector<TensorRef>& tensors,
                const std::map<std::string, std::string>& metadata) {
  const detail::Prepared prepared = detail::prepare(tensors, metadata, path);
  write_durably(path, [&](int fd, const std::string& temp) { write_all(fd, pieces_of(prepared), temp); });
}

void write_file_streaming(const std::string& path, const std::vector<TensorRef>& tensors,
                          const std::function<const void*(const TensorRef&)>& fill,
                          const std::map<std::string, std::string>& metadata) {
  const detail::Prepared prepared = detail::prepare(tensors, metadata, path, /*require_data=*/false);
  write_durably(path, [&](int fd, const std::string& temp) {
    write_all(fd, {iovec{const_cast<std::uint8_t*>(prepared.head.data()), prepared.head.size()}}, temp);
    for (const TensorRef* t : prepared.order) {
      if (t->nbytes == 0) continue;
      TensorRef filled = *t;
      filled.data = fill(*t);
      if (filled.data == nullptr)
        throw FormatError(path + ": no bytes were given for tensor '" + t->name + "'");
      detail::Prepared one{{}, {&filled}, filled.nbytes};
      write_all(fd, pieces_of(one), temp);
    }
  });
}

}  // namespace shardkit::safetensors
