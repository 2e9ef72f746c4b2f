// RankOutput: line splitting, prefixing, last-lines ring and raw log file of one rank.
#include "rank_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "shardkit/error.hpp"

namespace shardkit::run {
namespace {
// A line longer than this is cut and relayed in pieces, so a worker printing without
// newlines cannot make the launcher buffer without bound.
constexpr std::size_t kMaxLine = 64 * 1024;
}  // namespace

void write_fully(int fd, const std::string& text) {
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

RankOutput::RankOutput(int rank, const std::string& log_path, std::size_t keep_lines)
    : rank_(rank), prefix_("[rank" + std::to_string(rank) + "]: "), keep_(keep_lines) {
  if (!log_path.empty()) {
    log_fd_ = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd_ < 0)
      throw RuntimeError("cannot write the log of rank " + std::to_string(rank) + " to " +
                         log_path + ": " + std::strerror(errno) + " (check --log-dir)");
  }
}

RankOutput::~RankOutput() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

void RankOutput::feed(Stream stream, const char* data, std::size_t size) {
  std::string& partial = partial_[static_cast<int>(stream)];
  const char* end = data + size;
  while (data < end) {
    const char* newline = static_cast<const char*>(std::memchr(data, '\n', end - data));
    if (!newline) {
      partial.append(data, end);
      if (partial.size() >= kMaxLine) {
        emit(stream, partial);
        partial.clear();
      }
      return;
    }
    partial.append(data, newline);
    emit(stream, partial);
    partial.clear();
    data = newline + 1;
  }
}

void RankOutput::finish(Stream stream) {
  std::string& partial = partial_[static_cast<int>(stream)];
  if (!partial.empty()) emit(stream, partial);
  partial.clear();
}

void RankOutput::emit(Stream stream, const std::string& line) {
  write_fully(stream == Stream::Out ? STDOUT_FILENO : STDERR_FILENO, prefix_ + line + "\n");
  if (log_fd_ >= 0) write_fully(log_fd_, line + "\n");
  last_.push_back(line);
  while (last_.size() > keep_) last_.pop_front();
}

}  // namespace shardkit::run
