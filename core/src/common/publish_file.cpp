// Crash-safe publication of one file: a sibling temporary, fsync, rename, fsync of the folder.
#include "shardkit/publish_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit {

namespace {

[[noreturn]] void io_fail(const std::string& path, const std::string& what, int err) {
  throw RuntimeError(path + ": " + what + ": " + std::strerror(err));
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

void start_writeback(int fd, std::int64_t offset, std::int64_t length) noexcept {
  // Best effort: where the file system or the descriptor does not support it (a pipe, some
  // network file systems), the bytes are written back by the fsync that follows, as before.
  if (length > 0) (void)::sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

int write_fully(int fd, const void* data, std::size_t size, WriteBehind* behind) noexcept {
  const auto* bytes = static_cast<const char*>(data);
  // Large writes go in pieces, each handed to the disk as soon as it is in the page cache.
  std::optional<WriteBehind> own;
  if (behind == nullptr && size >= kWriteBehindMin)
    if (const off_t at = ::lseek(fd, 0, SEEK_CUR); at >= 0) behind = &own.emplace(fd, at);
  std::size_t done = 0;
  while (done < size) {
    const auto piece = behind != nullptr ? std::min(size - done, kWriteBehindPiece) : size - done;
    const auto n = ::write(fd, bytes + done, piece);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;  // no progress and no reason: never loop
    done += static_cast<std::size_t>(n);
    if (behind != nullptr) behind->wrote(n);
  }
  if (own) own->flush();
  return 0;
}

void write_all(int fd, const void* data, std::size_t size, const std::string& path) {
  if (const int err = write_fully(fd, data, size)) io_fail(path, "cannot write", err);
}

void publish_file(const std::string& path, const std::function<void(int fd, const std::string& temp)>& write) {
  static std::atomic<unsigned> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    io_fail(temp, "cannot create the temporary file", err);
  }
  try {
    write(fd, temp);
    if (::fsync(fd) != 0) {
      const int err = errno;
      io_fail(temp, "cannot fsync", err);
    }
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail(temp, "cannot close", err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    io_fail(path, "cannot rename " + temp + " into place", err);
  }
  // Makes the rename itself durable; a failure here loses nothing already written.
  sync_directory(parent_dir(path));
}

void publish_text_file(const std::string& path, const std::string& content) {
  publish_file(path,
               [&content](int fd, const std::string& temp) { write_all(fd, content.data(), content.size(), temp); });
}

}  // namespace shardkit
