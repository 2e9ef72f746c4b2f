// Logger `jsonl`: <output_dir>/metrics.jsonl, one JSON object per log step, exact doubles.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <shardkit/error.hpp>
#include <shardkit/files.hpp>
#include <shardkit/json_text.hpp>
#include <shardkit/metrics_logger.hpp>
#include <shardkit/publish_file.hpp>

namespace {
namespace fs = std::filesystem;

class JsonlLogger final : public shardkit::MetricsLogger {
 public:
  void start(const shardkit::LoggerStart& start) override {
    path_ = (fs::path(start.output_dir) / "metrics.jsonl").string();
    truncate_after(start.first_step);  // what an interrupted attempt logged after the start
  }

  void log(const shardkit::MetricsRow& row) override {
    std::ostringstream line;
    line << "{\"step\":" << row.step;
    for (const auto& [name, value] : row.values)
      line << ",\"" << shardkit::json_escape(name) << "\":" << shardkit::json_number(value);
    line << "}\n";
    // Opened per line and flushed: a killed run leaves every line it logged.
    std::ofstream out(path_, std::ios::app);
    out << line.str();
    out.flush();
    if (!out) throw shardkit::FormatError("cannot append to " + path_);
  }

 private:
  /// Drops the lines after `step`, left by the interrupted run being resumed.
  void truncate_after(std::int64_t step) const {
    if (!fs::exists(path_)) return;
    std::istringstream in(shardkit::read_text_file(path_));
    std::string kept, line;
    while (std::getline(in, line)) {
      const auto at = line.find("\"step\":");
      if (at == std::string::npos || line.empty() || line.back() != '}') continue;  // not a record, or cut by a kill
      const long long line_step = std::atoll(line.c_str() + at + 7);
      if (line_step <= step) kept += line + "\n";
    }
    // Replaced in one rename: a kill leaves the old file or the new one, never a part.
    shardkit::publish_text_file(path_, kept);
  }

  std::string path_;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) { return std::make_shared<JsonlLogger>(); }

}  // namespace

SHARDKIT_PLUGIN(logger, jsonl, "0.1.0", "metrics.jsonl in the run folder: one JSON line per log step (always on)",
                SHARDKIT_PLUGIN_NO_OPTIONS, make)
