// Publishing a file crash-safely: its readers see the old file or the new one, never a part.
//
//   shardkit::publish_text_file(dir + "/manifest.json", text);
//   shardkit::publish_file(path, [&](int fd, const std::string& temp) { shardkit::write_all(fd, data, size, temp); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace shardkit {

/// Writes the file `path` through a sibling temporary ("<path>.tmp.<pid>.<n>"): `write` fills
/// the open temporary (its descriptor and name given), which is then fsynced, renamed over
/// `path`, and the folder fsynced. A crash leaves the old file or the new one, and a process
/// still mapping the old file keeps its bytes. The temporary is removed when anything fails.
/// Throws RuntimeError naming the file and the system's reason; what `write` throws passes through.
void publish_file(const std::string& path, const std::function<void(int fd, const std::string& temp)>& write);

/// publish_file() of `content`.
void publish_text_file(const std::string& path, const std::string& content);

/// Writes all `size` bytes at `data` to `fd`, resuming after short writes and EINTR. Returns 0,
/// or the errno of the write that failed (EIO for one that made no progress and gave no reason).
/// Given `behind`, the write goes in pieces of kWriteBehindPiece counted there (the caller's
/// file-long write-behind); without it, a write of kWriteBehindMin bytes or more goes in such
/// pieces, each handed to the disk (start_writeback) once it is in the page cache, so that the
/// disk writes while the rest is copied and the fsync that follows waits only for the tail.
class WriteBehind;
int write_fully(int fd, const void* data, std::size_t size, WriteBehind* behind = nullptr) noexcept;

/// Asks the kernel to start writing `length` bytes of `fd` from `offset` to the disk, without
/// waiting (sync_file_range's SYNC_FILE_RANGE_WRITE). Not durability: an fsync must still follow.
/// Best effort: where the file cannot (a pipe, some file systems) nothing happens.
void start_writeback(int fd, std::int64_t offset, std::int64_t length) noexcept;

/// Writes at least this large start their writeback as they go (write_fully, safetensors' writer).
inline constexpr std::size_t kWriteBehindMin = std::size_t{1} << 20;
/// The piece of a large write copied into the page cache before its writeback is started.
inline constexpr std::size_t kWriteBehindPiece = std::size_t{16} << 20;

/// The bookkeeping of write-behind for one file: counts the bytes written to `fd` from `offset`
/// on and hands them to the disk (start_writeback) each time kWriteBehindPiece have gathered.
class WriteBehind {
 public:
  WriteBehind(int fd, std::int64_t offset) noexcept : fd_(fd), end_(offset), started_(offset) {}
  /// Counts `n` bytes just written after the others.
  void wrote(std::int64_t n) noexcept {
    end_ += n;
    if (end_ - started_ >= static_cast<std::int64_t>(kWriteBehindPiece)) flush();
  }
  /// Hands what was counted and not yet handed to the disk.
  void flush() noexcept {
    start_writeback(fd_, started_, end_ - started_);
    started_ = end_;
  }

 private:
  int fd_;
  std::int64_t end_, started_;  ///< the end of what was written; of what was handed to the disk
};

/// write_fully(), throwing RuntimeError naming `path`, the file behind `fd`, when it fails.
void write_all(int fd, const void* data, std::size_t size, const std::string& path);

}  // namespace shardkit
