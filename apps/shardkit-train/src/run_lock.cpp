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

namespace {
RunLock* held_lock = nullptr;  ///< the lock this process holds (one run per process)
}  // namespace

void undo_failed_start() {
  if (held_lock) held_lock->undo_unstarted();
}

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
  lock_file_ = fs::exists(path) ? "" : path;
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
  held_lock = this;
  return "";
}

void RunLock::undo_unstarted() {
  if (started_ || fd_ < 0) return;
  std::error_code ec;
  // A failed start leaves nothing behind: the folders it created, or else the lock file it made.
  if (!created_.empty())
    fs::remove_all(created_, ec);
  else if (!lock_file_.empty())
    fs::remove(lock_file_, ec);
  created_.clear();
  lock_file_.clear();
}

RunLock::~RunLock() {
  undo_unstarted();
  if (held_lock == this) held_lock = nullptr;
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace shardkit::train
