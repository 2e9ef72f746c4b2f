// One rank's output: split into lines, relayed with a "[rank<R>]: " prefix, kept, logged.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

namespace shardkit::run {

/// Which of a worker's streams a chunk came from.
enum class Stream { Out, Err };

/// Collects one rank's stdout and stderr. Each complete line is written at once (one
/// write() per line, so lines of different ranks never interleave mid-line) to the
/// launcher's stdout or stderr with the prefix "[rank<R>]: ", appended raw to the log
/// file when there is one, and kept among the rank's last lines.
class RankOutput {
 public:
  /// `log_path` empty = no log file. Throws shardkit::RuntimeError when it cannot be opened.
  RankOutput(int rank, const std::string& log_path, std::size_t keep_lines = 20);
  ~RankOutput();
  RankOutput(const RankOutput&) = delete;
  RankOutput& operator=(const RankOutput&) = delete;

  /// Bytes read from one stream; emits every line they complete.
  void feed(Stream stream, const char* data, std::size_t size);
  /// The stream reached end of file: emits its unterminated last line, if any.
  void finish(Stream stream);

  /// The last lines of both streams, oldest first, without prefix or newline.
  const std::deque<std::string>& last_lines() const { return last_; }
  int rank() const { return rank_; }

 private:
  void emit(Stream stream, const std::string& line);
  int rank_;
  std::string prefix_;
  std::size_t keep_;
  std::string partial_[2];
  std::deque<std::string> last_;
  int log_fd_ = -1;
};

/// Writes all of `text` to `fd`, retrying short writes; gives up silently on errors
/// (a closed stdout must not stop the launcher from supervising its workers).
void write_fully(int fd, const std::string& text);

}  // namespace shardkit::run
