// trackio's SQLite store: its tables, its lock, and rows in the form its reader expects.
#include "trackio_store.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <thread>

#include <shardkit/error.hpp>
#include <shardkit/json_text.hpp>

namespace shardkit::trackio {
namespace {
namespace fs = std::filesystem;

// trackio's schema version (PRAGMA user_version) and the tables its reader needs, as its
// init_db() creates them; trackio adds the rest (traces, alerts, artifacts, ...) when it opens
// the project, and its migrations find these columns already there.
constexpr int kSchemaVersion = 2;
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, timestamp TEXT NOT NULL,
  run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL, log_id TEXT, space_id TEXT);
CREATE TABLE IF NOT EXISTS configs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, run_name TEXT NOT NULL,
  config TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(run_id));
CREATE TABLE IF NOT EXISTS system_metrics (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, timestamp TEXT NOT NULL,
  run_name TEXT NOT NULL, metrics TEXT NOT NULL, log_id TEXT, space_id TEXT);
CREATE TABLE IF NOT EXISTS project_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_metrics_run_step ON metrics(run_id, step);
CREATE INDEX IF NOT EXISTS idx_metrics_run_timestamp ON metrics(run_id, timestamp);
CREATE UNIQUE INDEX IF NOT EXISTS idx_metrics_log_id ON metrics(log_id) WHERE log_id IS NOT NULL;
)sql";

const char* kReserved[] = {"project", "run", "timestamp", "step", "time", "metrics"};

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

}  // namespace

std::string default_dir() {
  if (const char* dir = std::getenv("TRACKIO_DIR"); dir && *dir) return dir;
  if (const char* hf = std::getenv("HF_HOME"); hf && *hf) return (fs::path(hf) / "trackio").string();
  const auto cache = env_or("XDG_CACHE_HOME", env_or("HOME", ".") + "/.cache");
  return (fs::path(cache) / "huggingface" / "trackio").string();
}

std::string canonical_project(const std::string& project) {
  std::string safe;
  for (const char c : project)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') safe += c;
  return safe.empty() ? "default" : safe;
}

std::string metrics_json(const std::vector<std::pair<std::string, double>>& values) {
  std::string out = "{";
  for (const auto& [name, value] : values) {
    bool reserved = name.rfind("__", 0) == 0;  // as trackio's Run.log renames them
    for (const auto* word : kReserved) reserved = reserved || name == word;
    const std::string key = reserved ? "__" + name : name;
    if (out.size() > 1) out += ',';
    out += '"' + json_escape(key) + "\":";
    if (std::isnan(value)) out += "\"NaN\"";
    else if (std::isinf(value)) out += value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    else out += json_number(value);
  }
  return out + "}";
}

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char full[64];
  std::snprintf(full, sizeof full, "%s.%06lld+00:00", text, static_cast<long long>(micros));
  return full;
}

std::string random_id() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static const char* hex = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 32; ++i) id += hex[random() % 16];
  return id;
}

/// trackio's write lock, held for one transaction.
class Store::Lock {
 public:
  Lock(const std::string& path, double wait_s) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw RuntimeError(path + ": cannot open trackio's lock file: " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::close(fd_);
        throw RuntimeError(path + ": another process holds trackio's lock (still after " +
                           json_number(wait_s) + " s)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~Lock() { ::close(fd_); }  // closing releases the flock

 private:
  int fd_ = -1;
};

Store::Store(const std::string& dir, const std::string& project, double lock_wait_s) : lock_wait_s_(lock_wait_s) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RuntimeError(dir + ": cannot create trackio's folder: " + ec.message());
  const auto name = canonical_project(project);
  path_ = (fs::path(dir) / (name + ".db")).string();
  lock_path_ = (fs::path(dir) / (name + ".lock")).string();
  Lock lock(lock_path_, lock_wait_s_);
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw RuntimeError(path_ + ": cannot open trackio's database: " + why);
  }
  sqlite3_busy_timeout(db_, 30000);
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  sqlite3_stmt* version = nullptr;
  sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &version, nullptr);
  const int found = sqlite3_step(version) == SQLITE_ROW ? sqlite3_column_int(version, 0) : 0;
  sqlite3_finalize(version);
  if (found > kSchemaVersion)
    throw RuntimeError(path_ + ": written by a newer trackio (schema version " + std::to_string(found) +
                       ", this writer knows " + std::to_string(kSchemaVersion) + ")");
  exec(kSchema);
  if (found < kSchemaVersion) exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
}

Store::~Store() { sqlite3_close(db_); }

void Store::exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw RuntimeError(path_ + ": " + why);
  }
}

namespace {

/// A prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement& text(int at, const std::string& value) {
    sqlite3_bind_text(stmt_, at, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& integer(int at, std::int64_t value) {
    sqlite3_bind_int64(stmt_, at, value);
    return *this;
  }
  /// Runs it; true while it yields a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  void reset() { sqlite3_reset(stmt_); }
  std::string column_text(int at) const {
    const auto* text = sqlite3_column_text(stmt_, at);
    return text ? reinterpret_cast<const char*>(text) : "";
  }

 private:
  [[noreturn]] void fail() const { throw RuntimeError(path_ + ": " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

std::string Store::run_id_named(const std::string& name) {
  Lock lock(lock_path_, lock_wait_s_);
  Statement find(db_, path_,
                 "SELECT run_id FROM metrics WHERE run_name = ? GROUP BY run_id ORDER BY MIN(timestamp) DESC LIMIT 1");
  find.text(1, name);
  return find.step() ? find.column_text(0) : "";
}

void Store::remove_steps_after(const std::string& run_id, std::int64_t step) {
  Lock lock(lock_path_, lock_wait_s_);
  Statement remove(db_, path_, "DELETE FROM metrics WHERE run_id = ? AND step > ?");
  remove.text(1, run_id).integer(2, step).step();
}

void Store::write_config(const std::string& run_id, const std::string& run_name, const std::string& config_json) {
  Lock lock(lock_path_, lock_wait_s_);
  Statement write(db_, path_,
                  "INSERT OR REPLACE INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)");
  write.text(1, run_id).text(2, run_name).text(3, config_json).text(4, utc_timestamp()).step();
}

void Store::write_rows(const std::string& run_id, const std::string& run_name, const std::vector<Row>& rows) {
  Lock lock(lock_path_, lock_wait_s_);
  exec("BEGIN IMMEDIATE");
  try {
    Statement insert(db_, path_,
                     "INSERT OR IGNORE INTO metrics (run_id, timestamp, run_name, step, metrics, log_id) "
                     "VALUES (?, ?, ?, ?, ?, ?)");
    for (const auto& row : rows) {
      insert.text(1, run_id).text(2, row.timestamp).text(3, run_name).integer(4, row.step);
      insert.text(5, metrics_json(row.values)).text(6, random_id());
      insert.step();
      insert.reset();
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace shardkit::trackio
