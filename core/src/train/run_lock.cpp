// A run folder belongs to one run: an exclusive lock on <output_dir>/.lock, held by rank 0.
#include "run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "shardkit/files.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

std::string RunLock::acquire(const std::string& output_dir) {
  const fs::path dir(output_dir);
  if (fs::exists(dir) && !fs::is_directory(dir)) return "--output_dir=" + output_dir + " exists and is not a folder";
  // The outermost missing folder: removing it undoes everything created below it.
  for (fs::path p = fs::absolute(dir).lexically_normal(); !p.empty() && !fs::exists(p); p = p.parent_path()) {
    created_ = p.string();
    if (p == p.parent_path()) break;
  }
  make_directories(output_dir);
  const auto path = (dir / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    return "cannot open " + path + " to lock the run folder: " + std::strerror(errno) +
           "; check the permissions of --output_dir=" + output_dir;
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    std::string holder;
    std::ifstream(path) >> holder;
    if (err != EWOULDBLOCK) return "cannot lock " + path + ": " + std::strerror(err);
    return "--output_dir=" + output_dir + " is in use by another run (process " +
           (holder.empty() ? std::string("unknown") : holder) + " holds " + path +
           "); wait for it to finish, or choose another --output_dir";
  }
  const auto pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    return "cannot write the run lock " + path + ": " + std::strerror(errno);
  return "";
}

RunLock::~RunLock() {
  if (!started_ && !created_.empty()) {
    std::error_code ec;
    fs::remove_all(created_, ec);  // a failed start leaves no folder behind
  }
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace shardkit::train
