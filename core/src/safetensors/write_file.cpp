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
#include <optional>

#include "format_internal.hpp"
#include "shardkit/error.hpp"
#include "shardkit/publish_file.hpp"

namespace shardkit::safetensors {

namespace {

// The most one iovec carries: a piece of write-behind (Linux moves at most 0x7ffff000 bytes
// per call in any case).
constexpr std::size_t kMaxChunk = kWriteBehindPiece;

[[noreturn]] void io_fail(const std::string& path, const std::string& what, int err) {
  throw RuntimeError(path + ": " + what + ": " + std::strerror(err));
}

// Writes every byte of `pieces` with writev, resuming after
// short writes and EINTR; every kWriteBehindPiece bytes in the page cache are handed to the
// disk while the rest is copied (start_writeback), so that the final fsync waits for the tail.
void write_all(int fd, std::vector<iovec> pieces, const std::string& path) {
  std::size_t total = 0;
  for (const auto& piece : pieces) total += piece.iov_len;
  // Small writes (a header, a small tensor of a streamed file) are left to the fsync.
  std::optional<WriteBehind> behind;
  if (total >= kWriteBehindMin)
    if (const off_t at = ::lseek(fd, 0, SEEK_CUR); at >= 0) behind.emplace(fd, at);
  std::size_t first = 0;
  while (first < pieces.size()) {
    // At most IOV_MAX pieces and kWriteBehindPiece bytes per call (a piece is never larger).
    std::size_t count = 1, bytes = pieces[first].iov_len;
    while (first + count < pieces.size() && count < IOV_MAX &&
           bytes + pieces[first + count].iov_len <= kWriteBehindPiece)
      bytes += pieces[first + count++].iov_len;
    const ssize_t written = ::writev(fd, pieces.data() + first, static_cast<int>(count));
    if (written < 0) {
      if (errno == EINTR) continue;
      io_fail(path, "cannot write safetensors data", errno);
    }
    if (behind) behind->wrote(written);
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
  if (behind) behind->flush();
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
