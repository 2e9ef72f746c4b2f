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
/// A write of kWriteBehindMin bytes or more goes in pieces of kWriteBehindPiece, each handed to
/// the disk (start_writeback) once it is in the page cache, so that the disk writes while the
/// rest is copied and the fsync that follows waits only for the tail.
int write_fully(int fd, const void* data, std::size_t size) noexcept;

/// Asks the kernel to start writing `length` bytes of `fd` from `offset` to the disk, without
/// waiting (sync_file_range's SYNC_FILE_RANGE_WRITE). Not durability: an fsync must still follow.
/// Best effort: where the file cannot (a pipe, some file systems) nothing happens.
void start_writeback(int fd, std::int64_t offset, std::int64_t length) noexcept;

/// Writes at least this large start their writeback as they go (write_fully, safetensors' writer).
inline constexpr std::size_t kWriteBehindMin = std::size_t{1} << 20;
/// The piece of a large write copied into the page cache before its writeback is started.
inline constexpr std::size_t kWriteBehindPiece = std::size_t{16} << 20;

/// write_fully(), throwing RuntimeError naming `path`, the file behind `fd`, when it fails.
void write_all(int fd, const void* data, std::size_t size, const std::string& path);

}  // namespace shardkit
