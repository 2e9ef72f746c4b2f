// safetensors::write_file: the header then the tensor bytes in large writes, published crash-safely
// (publish_file: a sibling temporary, fsync, rename, as the reference does; a File still mapping
// the old file keeps its bytes, and no reader ever sees a half-written one).
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "format_internal.hpp"
#include "shardkit/error.hpp"
#include "shardkit/publish_file.hpp"

namespace shardkit::safetensors {

namespace {

// Linux moves at most this much per write call; asking for more just returns short.
constexpr std::size_t kMaxChunk = 0x7ffff000;

[[noreturn]] void io_fail(const std::string& path, const std::string& what, int err) {
  throw RuntimeError(path + ": " + what + ": " + std::strerror(err));
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

void write_file(const std::string& path, const std::vector<TensorRef>& tensors,
                const std::map<std::string, std::string>& metadata) {
  const detail::Prepared prepared = detail::prepare(tensors, metadata, path);
  publish_file(path, [&](int fd, const std::string& temp) { write_all(fd, pieces_of(prepared), temp); });
}

void write_file_streaming(const std::string& path, const std::vector<TensorRef>& tensors,
                          const std::function<const void*(const TensorRef&)>& fill,
                          const std::map<std::string, std::string>& metadata) {
  const detail::Prepared prepared = detail::prepare(tensors, metadata, path, /*require_data=*/false);
  publish_file(path, [&](int fd, const std::string& temp) {
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
