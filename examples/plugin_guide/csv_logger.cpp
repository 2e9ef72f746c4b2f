// Logger `csv`: the logger plugin of docs/plugins.md (<output_dir>/metrics.csv, one row per log step).
#include <fstream>

#include <shardkit/error.hpp>
#include <shardkit/metrics_logger.hpp>
#include <shardkit/plugin.hpp>

namespace {

class CsvLogger final : public shardkit::MetricsLogger {
 public:
  // Only rank 0 creates loggers; start() comes once, before the first row.
  void start(const shardkit::LoggerStart& start) override {
    path_ = start.output_dir + "/metrics.csv";
    // A resumed run appends: rows after the checkpoint's step appear twice, the later one
    // being the resumed run's.
    header_written_ = std::ifstream(path_).peek() != std::ifstream::traits_type::eof();
  }

  void log(const shardkit::MetricsRow& row) override {
    std::ofstream out(path_, std::ios::app);
    if (!header_written_) {
      out << "step";
      for (const auto& [name, value] : row.values) out << "," << name;
      out << "\n";
      header_written_ = true;
    }
    out << row.step;
    for (const auto& [name, value] : row.values) out << "," << value;
    out << "\n";
    out.flush();  // each row reaches the file at once: a crash loses nothing logged
    if (!out) throw shardkit::FormatError("cannot append to " + path_);
  }

 private:
  std::string path_;
  bool header_written_ = false;
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext&) { return std::make_shared<CsvLogger>(); }

}  // namespace

SHARDKIT_PLUGIN(logger, csv, "0.1.0", "metrics.csv in the run folder", SHARDKIT_PLUGIN_NO_OPTIONS, make)
