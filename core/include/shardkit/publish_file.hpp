// Publishing a file crash-safely: its readers see the old file or the new one, never a part.
//
//   shardkit::publish_text_file(dir + "/manifest.json", text);
//   shardkit::publish_file(path, [&](int fd, const std::string& temp) { shardkit::write_all(fd, data, size, temp); });
#pragma once

#include <cstddef>
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
int write_fully(int fd, const void* data, std::size_t size) noexcept;

/// write_fully(), throwing RuntimeError naming `path`, the file behind `fd`, when it fails.
void write_all(int fd, const void* data, std::size_t size, const std::string& path);

}  // namespace shardkit
