// Logger `tensorboard`: each log step as TensorBoard scalars train/<name> (eval/<name> for eval_*) in event files.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>

#include <shardkit/error.hpp>
#include <shardkit/files.hpp>
#include <shardkit/metrics_logger.hpp>

#include "event_file.hpp"
#include "tensorboard_event.pb.h"

namespace {
namespace fs = std::filesystem;
namespace tb = shardkit::tensorboard;

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || !name[0]) return "localhost";
  return name;
}

/// events.out.tfevents.<seconds>.<host>.<pid>.<n> in `dir`: the name TensorBoard looks for
/// ("tfevents"), new for every run and resume (TensorBoard merges the files of a folder).
std::string new_event_file_name(const fs::path& dir) {
  const auto stem = "events.out.tfevents." + std::to_string(std::time(nullptr)) + "." + host_name() + "." +
                    std::to_string(getpid()) + ".";
  for (int n = 0;; ++n)
    if (const auto path = dir / (stem + std::to_string(n)); !fs::exists(path)) return path.string();
}

class TensorBoardLogger final : public shardkit::MetricsLogger {
 public:
  explicit TensorBoardLogger(const shardkit::PluginContext& ctx) : log_dir_(ctx.options.get_string("log_dir")) {}

  ~TensorBoardLogger() override {
    try {
      if (file_) file_->flush();
    } catch (const std::exception&) {
      // A destructor cannot report; log() and finish() have reported write errors already.
    }
  }

  void start(const shardkit::LoggerStart& start) override {
    const auto dir = fs::path(start.output_dir) / log_dir_;
    shardkit::make_directories(dir.string());
    file_ = std::make_unique<tb::EventFile>(new_event_file_name(dir));
    tb::Event event;
    event.set_wall_time(wall_time());
    event.set_step(start.first_step);
    event.set_file_version("brain.Event:2");
    write(event);
    // An interrupted attempt (resumed, or restarted by the launcher) may have logged steps after
    // `first_step`: TensorBoard purges them from the older files of the folder when it reads a
    // session start (event files of version 2) at the first step logged now.
    tb::Event session;
    session.set_wall_time(wall_time());
    session.set_step(start.first_step + 1);
    session.mutable_session_log()->set_status(tb::SessionLog::START);
    write(session);
  }

  void log(const shardkit::MetricsRow& row) override {
    tb::Event event;
    event.set_wall_time(wall_time());
    event.set_step(row.step);
    auto* summary = event.mutable_summary();
    for (const auto& [name, value] : row.values) {
      auto* v = summary->add_value();
      // LeRobot's groups: evaluation values under eval/, the rest under train/.
      v->set_tag((name.rfind("eval_", 0) == 0 ? "eval/" : "train/") + name);
      v->set_simple_value(static_cast<float>(value));
    }
    write(event);
  }

  void finish() override {
    if (file_) file_->flush();
  }

 private:
  /// One record, flushed at once: a crash loses no logged step.
  void write(const tb::Event& event) {
    if (!file_) throw shardkit::RuntimeError("tensorboard logger: log() before start()");
    file_->write_record(event.SerializeAsString());
    file_->flush();
  }

  std::string log_dir_;
  std::unique_ptr<tb::EventFile> file_;
};

using shardkit::OptionType;
const shardkit::OptionSpec kOptions[] = {
    {"log_dir", OptionType::String, "tensorboard",
     "Folder of the event files, relative to the run folder (or absolute); point tensorboard --logdir at it",
     nullptr, nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<TensorBoardLogger>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN(logger, tensorboard, "0.1.0",
                "TensorBoard event files (scalars train/<metric>, eval/eval_<metric>) in <output_dir>/tensorboard", kOptions, make)
