// Crash-safe file helpers: fsync'd writes, whole-file reads, directory sync.
#include "shardkit/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "shardkit/error.hpp"
#include "shardkit/publish_file.hpp"

namespace shardkit {
namespace fs = std::filesystem;

void write_text_file(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw FormatError("cannot write " + path + ": " + std::strerror(errno));
  if (const int err = write_fully(fd, content.data(), content.size())) {
    ::close(fd);
    throw FormatError("cannot write " + path + ": " + std::strerror(err));
  }
  // A full disk may only show here (delayed allocation): both results count, and the
  // descriptor is closed whatever fsync said.
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0)
    throw FormatError("cannot flush " + path + ": " + std::strerror(synced != 0 ? synced : closed));
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void sync_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: some filesystems refuse directory handles
  ::fsync(fd);
  ::close(fd);
}

std::string folder_path(const std::string& path) {
  const auto normal = std::filesystem::path(path).lexically_normal();
  return (normal.filename().empty() ? normal.parent_path() : normal).string();
}

bool stays_inside(const std::string& relative) {
  if (relative.empty() || relative.front() == '/') return false;
  std::size_t start = 0;
  while (start <= relative.size()) {
    auto end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    if (end - start == 2 && relative.compare(start, 2, "..") == 0) return false;
    start = end + 1;
  }
  return true;
}

std::string link_leaving(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto root = fs::canonical(folder, ec);
  if (ec) return "";
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_symlink(ec)) continue;
    // Resolved as the system would open it: a dangling or looping link reads nothing.
    const auto target = fs::weakly_canonical(it->path(), ec);
    if (ec) continue;
    const auto inside = target.lexically_relative(root);
    if (inside.empty() || *inside.begin() == "..")
      return it->path().lexically_relative(root).string() + " -> " + fs::read_symlink(it->path(), ec).string();
  }
  return "";
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw FormatError("cannot create directory " + path + ": " + ec.message());
}

}  // namespace shardkit
