// trackio's local store, as trackio 0.43 writes it: one SQLite database per project in its folder.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace shardkit::trackio {

/// The folder trackio reads: $TRACKIO_DIR, else $HF_HOME/trackio, else
/// ${XDG_CACHE_HOME:-~/.cache}/huggingface/trackio.
std::string default_dir();

/// A project's name on disk, as trackio makes it: only [A-Za-z0-9_-] kept, "default" if none is.
std::string canonical_project(const std::string& project);

/// One logged step: its values by name, in order.
struct Row {
  std::int64_t step = 0;
  std::vector<std::pair<std::string, double>> values;
  std::string timestamp;  ///< UTC, trackio's fixed form 2026-01-02T03:04:05.678901+00:00
};

/// `values` as trackio's metrics column holds them: compact JSON (no spaces: the dashboard looks
/// for `:<digit>`), reserved names (project, run, timestamp, step, time, metrics, and names
/// starting with "__") prefixed with "__", NaN and infinities as "NaN", "Infinity", "-Infinity".
std::string metrics_json(const std::vector<std::pair<std::string, double>>& values);

/// Now, in trackio's timestamp form.
std::string utc_timestamp();

/// 32 random hex digits, like Python's uuid4().hex: trackio's run ids and log ids.
std::string random_id();

/// <dir>/<project>.db, opened (created with trackio's tables when new). Each write takes trackio's
/// lock (an exclusive flock on <dir>/<project>.lock), waiting at most `lock_wait_s`; every failure
/// throws RuntimeError naming the file and the reason.
class Store {
 public:
  Store(const std::string& dir, const std::string& project, double lock_wait_s);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// The newest run called `name`, by its first logged row; "" when there is none.
  std::string run_id_named(const std::string& name);
  /// Removes the run's rows after `step` (an interrupted attempt's, before a resume continues).
  void remove_steps_after(const std::string& run_id, std::int64_t step);
  /// Writes (or replaces) the run's configuration, a JSON object.
  void write_config(const std::string& run_id, const std::string& run_name, const std::string& config_json);
  /// Appends `rows` to the run, in one transaction.
  void write_rows(const std::string& run_id, const std::string& run_name, const std::vector<Row>& rows);
  /// Waits at most this long for the lock from now on.
  void set_lock_wait(double seconds) { lock_wait_s_ = seconds; }
  const std::string& path() const { return path_; }

 private:
  class Lock;
  void exec(const char* sql);
  std::string path_, lock_path_;
  double lock_wait_s_;
  sqlite3* db_ = nullptr;
};

}  // namespace shardkit::trackio
