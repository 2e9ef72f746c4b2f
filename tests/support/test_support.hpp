// Helpers for tests that run shardkit's programs as real processes and read what they wrote.
#pragma once

#include <cstdint>
#include <functional>
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

/// The Python of the SDK's venv (torch 2.15, safetensors, numpy), shell-quoted: the peer
/// the interop tests compare with.
std::string python();

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

/// A free TCP port on the loopback interface (bound, read, released).
int free_port();

/// A command running in the background in its own process group, output to a file.
/// The destructor kills the whole group, so a failing test leaves nothing behind.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::string& command);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  int pid() const { return pid_; }
  /// Sends `signal` to the process itself (not its group).
  void signal(int signal) const;
  /// Waits up to `timeout_s`; returns false (process still running) on timeout.
  bool wait(double timeout_s);
  /// Polls `condition` for up to `timeout_s` while the process runs; returns false as soon
  /// as the process has ended without it (a run that failed at start is not waited for).
  bool wait_for(const std::function<bool()>& condition, double timeout_s);
  /// Exit code (128+signal when killed) once wait() returned true.
  int exit_code() const { return exit_code_; }
  /// Output so far.
  std::string output() const;

 private:
  int pid_ = -1;
  int exit_code_ = -1;
  bool done_ = false;
  std::string log_;
};

/// Polls `condition` every 50 ms for up to `timeout_s`; returns whether it held.
bool wait_until(const std::function<bool()>& condition, double timeout_s);

/// Pids of running processes whose command line contains `needle`.
std::vector<int> processes_with(const std::string& needle);

/// The value of `name` in the environment of process `pid` ("" when unreadable).
std::string environment_of(int pid, const std::string& name);

}  // namespace shardkit::test
