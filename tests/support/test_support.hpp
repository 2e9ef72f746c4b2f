// Helpers for tests that run shardkit's programs as real processes and read what they wrote.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardkit::test {

/// What a finished process left behind.
struct ProcessResult {
  int exit_code = -1;  ///< exit status, or 128+signal when killed
  std::string output;  ///< stdout and stderr together
};

/// Quotes one argument for /bin/sh.
std::string shell_quote(const std::string& arg);

/// Runs `command` through /bin/sh with stderr merged into stdout.
ProcessResult run_command(const std::string& command);

/// Runs build/bin/<program> with `args` (each shell-quoted).
ProcessResult run_program(const std::string& program, const std::vector<std::string>& args);

/// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "shardkit-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& child) const { return path_ + "/" + child; }

 private:
  std::string path_;
};

/// One line of metrics.jsonl: the numeric fields, and the raw text of each value.
struct MetricsLine {
  std::int64_t step = 0;
  std::map<std::string, std::string> raw;  ///< field -> text as written (exact digits)
  double number(const std::string& field) const;
};

/// Reads <output_dir>/metrics.jsonl.
std::vector<MetricsLine> read_metrics(const std::string& output_dir);

/// Whether `text` contains `part` (for checking messages).
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Reads a whole file ("" when missing).
std::string slurp(const std::string& path);

}  // namespace shardkit::test
