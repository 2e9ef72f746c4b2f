// One log step's values: the row handed to the logger plugins and the readable progress line.
#include "metrics_log.hpp"

#include <cstdio>

namespace shardkit::train {

MetricsRow metrics_row(const MetricsRecord& r) {
  MetricsRow row;
  row.step = r.step;
  row.values = {{"epoch", r.epoch},
                {"loss", r.loss},
                {"lr", r.lr},
                {"grad_norm", r.grad_norm},
                {"samples_per_s", r.samples_per_s}};
  // Named like samples_per_s, LeRobot's per-log throughput; transformers' nearest name,
  // train_tokens_per_second, is a summary of the whole run, not a per-log value.
  if (r.tokens_per_s) row.values.emplace_back("tokens_per_s", *r.tokens_per_s);
  row.values.emplace_back("update_s", r.update_s);
  row.values.emplace_back("dataloading_s", r.dataloading_s);
  row.values.emplace_back("preprocessing_s", r.preprocessing_s);
  row.values.emplace_back("step_s", r.step_s);
  row.values.emplace_back("elapsed_s", r.elapsed_s);
  for (const auto& [name, value] : r.policy) row.values.emplace_back(name, value);
  for (const auto& [name, value] : r.comm) row.values.emplace_back(name, value);
  return row;
}

std::string progress_line(const MetricsRecord& r) {
  const double done = r.total_steps > 0 ? static_cast<double>(r.step) / r.total_steps : 1.0;
  const auto steps_here = r.step - r.first_step;
  const double per_step = steps_here > 0 ? r.elapsed_s / static_cast<double>(steps_here) : 0.0;
  const auto eta = static_cast<long long>(per_step * static_cast<double>(r.total_steps - r.step));
  char tokens[48] = "";
  if (r.tokens_per_s) std::snprintf(tokens, sizeof(tokens), " | %.0f tokens/s", *r.tokens_per_s);
  char buffer[360];
  std::snprintf(buffer, sizeof(buffer),
                "step %lld/%lld (%3.0f%%) | epoch %.2f | loss %.5g | grad_norm %.4g | lr %.3e | "
                "%.0f samples/s%s | updt %.1f ms | data %.1f ms | prep %.1f ms | step %.1f ms | ETA %lld:%02lld:%02lld",
                static_cast<long long>(r.step), static_cast<long long>(r.total_steps), done * 100.0,
                r.epoch, r.loss, r.grad_norm, r.lr, r.samples_per_s, tokens, r.update_s * 1e3,
                r.dataloading_s * 1e3, r.preprocessing_s * 1e3, r.step_s * 1e3, eta / 3600, (eta / 60) % 60, eta % 60);
  std::string text = buffer;
  for (const auto& [name, value] : r.policy) {
    std::snprintf(buffer, sizeof(buffer), " | %s %.4g", name.c_str(), value);
    text += buffer;
  }
  return text;
}

}  // namespace shardkit::train
