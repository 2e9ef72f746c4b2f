// Writing metrics.jsonl with exact doubles, truncating it on resume, and the progress line.
#include "metrics_log.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::train {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string json_escape(const std::string& text) {
  std::string escaped;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') escaped += '\\', escaped += static_cast<char>(c);
    else if (c == '\n') escaped += "\\n";
    else if (c < 0x20) escaped += ' ';
    else escaped += static_cast<char>(c);
  }
  return escaped;
}

void MetricsLog::truncate_after(std::int64_t step) const {
  if (!std::filesystem::exists(path_)) return;
  std::istringstream in(read_text_file(path_));
  std::string kept, line;
  while (std::getline(in, line)) {
    const auto at = line.find("\"step\":");
    if (at == std::string::npos || line.back() != '}') continue;  // not a record, or cut by a kill
    const long long line_step = std::atoll(line.c_str() + at + 7);
    if (line_step <= step) kept += line + "\n";
  }
  // Replaced in one rename: a kill leaves the old file or the new one, never a part.
  const auto tmp = path_ + ".tmp";
  write_text_file(tmp, kept);
  std::filesystem::rename(tmp, path_);
}

void MetricsLog::append(const MetricsRecord& r) const {
  std::ostringstream line;
  line << "{\"step\":" << r.step << ",\"epoch\":" << json_number(r.epoch)
       << ",\"loss\":" << json_number(r.loss) << ",\"lr\":" << json_number(r.lr)
       << ",\"grad_norm\":" << json_number(r.grad_norm)
       << ",\"samples_per_s\":" << json_number(r.samples_per_s)
       << ",\"update_s\":" << json_number(r.update_s)
       << ",\"dataloading_s\":" << json_number(r.dataloading_s)
       << ",\"elapsed_s\":" << json_number(r.elapsed_s);
  for (const auto& [name, value] : r.policy) line << ",\"" << json_escape(name) << "\":" << json_number(value);
  line << "}\n";
  std::ofstream out(path_, std::ios::app);
  out << line.str();
  out.flush();
  if (!out) throw FormatError("cannot append to " + path_);
}

std::string MetricsLog::progress_line(const MetricsRecord& r) {
  const double done = r.total_steps > 0 ? static_cast<double>(r.step) / r.total_steps : 1.0;
  const auto steps_here = r.step - r.first_step;
  const double per_step = steps_here > 0 ? r.elapsed_s / static_cast<double>(steps_here) : 0.0;
  const auto eta = static_cast<long long>(per_step * static_cast<double>(r.total_steps - r.step));
  char buffer[320];
  std::snprintf(buffer, sizeof(buffer),
                "step %lld/%lld (%3.0f%%) | epoch %.2f | loss %.5g | grad_norm %.4g | lr %.3e | "
                "%.0f samples/s | updt %.1f ms | data %.1f ms | ETA %lld:%02lld:%02lld",
                static_cast<long long>(r.step), static_cast<long long>(r.total_steps), done * 100.0,
                r.epoch, r.loss, r.grad_norm, r.lr, r.samples_per_s, r.update_s * 1e3,
                r.dataloading_s * 1e3, eta / 3600, (eta / 60) % 60, eta % 60);
  std::string text = buffer;
  for (const auto& [name, value] : r.policy) {
    std::snprintf(buffer, sizeof(buffer), " | %s %.4g", name.c_str(), value);
    text += buffer;
  }
  return text;
}

}  // namespace shardkit::train
