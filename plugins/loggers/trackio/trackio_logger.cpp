// Logger `trackio`: each log step in trackio's local store, as LeRobot's --trackio.enable records a run.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include <shardkit/error.hpp>
#include <shardkit/files.hpp>
#include <shardkit/metrics_logger.hpp>
#include <shardkit/publish_file.hpp>

#include "trackio_store.hpp"

namespace {
namespace fs = std::filesystem;
namespace tk = shardkit::trackio;

// The run folder remembers its trackio run, so that a resume continues that run, not the newest
// of the same name.
constexpr const char* kRunIdFile = "trackio_run_id";
// Training never waits on the tracker for long: a row that cannot be written (a busy or locked
// store) waits in memory for the next log step; only the end of the run waits as trackio does.
constexpr double kLogLockWaitS = 0.2;
constexpr double kFinishLockWaitS = 10;
constexpr std::size_t kMaxPendingRows = 100000;

class TrackioLogger final : public shardkit::MetricsLogger {
 public:
  explicit TrackioLogger(const shardkit::PluginContext& ctx)
      : project_(ctx.options.get_string("project")),
        run_(ctx.options.get_string("run")),
        dir_(ctx.options.get_string("dir")),
        log_(ctx.logger) {
    if (run_.empty() && ctx.full_config && ctx.full_config->has("job_name")) run_ = ctx.full_config->get_string("job_name");
    if (run_.empty()) run_ = "shardkit";
    if (dir_.empty()) dir_ = tk::default_dir();
    if (ctx.full_config) config_ = ctx.full_config->to_json();
  }

  ~TrackioLogger() override {
    try {
      flush(kFinishLockWaitS);
    } catch (const std::exception&) {
      // A destructor cannot report; finish() has.
    }
  }

  void start(const shardkit::LoggerStart& start) override {
    try {
      store_ = std::make_unique<tk::Store>(dir_, project_, kFinishLockWaitS);
      const auto id_file = (fs::path(start.output_dir) / kRunIdFile).string();
      if (start.first_step > 0) {
        // A resume: the run this folder logged to (or, for a folder from before this file, the
        // newest run of the name), without what an interrupted attempt logged after the checkpoint.
        run_id_ = fs::exists(id_file) ? trimmed(shardkit::read_text_file(id_file)) : store_->run_id_named(run_);
        if (!run_id_.empty()) store_->remove_steps_after(run_id_, start.first_step);
      }
      if (run_id_.empty()) run_id_ = tk::random_id();
      shardkit::publish_text_file(id_file, run_id_ + "\n");
      store_->write_config(run_id_, run_, config_with_trackio_fields());
      store_->set_lock_wait(kLogLockWaitS);
      if (log_)
        log_->info("trackio: project '{}', run '{}' in {} (trackio show --project {})", project_, run_, store_->path(),
                   project_);
    } catch (const std::exception& e) {
      store_.reset();
      warn_once(std::string("trackio: not recording this run: ") + e.what());
    }
  }

  void log(const shardkit::MetricsRow& row) override {
    if (!store_) return;
    if (pending_.size() < kMaxPendingRows) pending_.push_back({row.step, row.values, tk::utc_timestamp()});
    flush(kLogLockWaitS);
  }

  void finish() override { flush(kFinishLockWaitS); }

 private:
  void flush(double lock_wait_s) {
    if (!store_ || pending_.empty()) return;
    try {
      store_->set_lock_wait(lock_wait_s);
      store_->write_rows(run_id_, run_, pending_);
      pending_.clear();
    } catch (const std::exception& e) {
      warn_once(std::string("trackio: ") + e.what() + "; training goes on, and the rows wait for the next log step (" +
                std::to_string(pending_.size()) + " now)");
    }
    store_->set_lock_wait(kLogLockWaitS);
  }

  /// The resolved configuration with the fields trackio's own init adds (_Username, _Created, _Group).
  std::string config_with_trackio_fields() const {
    std::string json = config_.empty() ? "{}" : config_;
    while (!json.empty() && json.back() != '}') json.pop_back();
    if (json.empty()) json = "{}";
    json.pop_back();
    while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.pop_back();
    const bool empty = json.back() == '{';
    return json + (empty ? "" : ",") + "\"_Username\":null,\"_Created\":\"" + tk::utc_timestamp() +
           "\",\"_Group\":null}";
  }

  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }

  void warn_once(const std::string& message) {
    if (warned_) return;
    warned_ = true;
    if (log_) log_->warn("{}", message);
  }

  std::string project_, run_, dir_, config_, run_id_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<tk::Store> store_;
  std::vector<tk::Row> pending_;
  bool warned_ = false;
};

using shardkit::OptionType;
const shardkit::OptionSpec kOptions[] = {
    {"project", OptionType::String, "lerobot", "trackio project (LeRobot's --trackio.project sets it)", nullptr,
     nullptr, nullptr},
    {"run", OptionType::String, "", "trackio run name; empty = the run's --job_name", nullptr, nullptr, nullptr},
    {"dir", OptionType::String, "",
     "trackio's folder; empty = $TRACKIO_DIR, else $HF_HOME/trackio, else ~/.cache/huggingface/trackio (where "
     "trackio looks)",
     nullptr, nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<TrackioLogger>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(logger, trackio, "0.1.0",
                "trackio's local store (SQLite, read by trackio show and its API): each log step and the config",
                kOptions, make)
