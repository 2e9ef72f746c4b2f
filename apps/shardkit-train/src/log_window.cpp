// The log window carried across a resume.
#include "log_window.hpp"

#include <torch/torch.h>

#include <vector>

#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"
#include "shardkit/json_text.hpp"

namespace shardkit::train {

LogWindow LogWindow::averaged_over(CommGroup& group) const {
  if (group.size() == 1) return *this;
  std::vector<double> values{loss_sum};
  for (const auto& [name, sum] : policy_sums) values.push_back(sum);
  auto sums = torch::tensor(values, torch::kFloat64);
  group.all_reduce(sums, ReduceOp::Sum);
  LogWindow mean = *this;
  const auto n = static_cast<double>(group.size());
  mean.loss_sum = sums[0].item<double>() / n;
  std::int64_t i = 1;
  for (auto& [name, sum] : mean.policy_sums) sum = sums[i++].item<double>() / n;
  return mean;
}

std::string log_window_json(const LogWindow& window) {
  std::string policy;
  for (const auto& [name, sum] : window.policy_sums)
    policy += (policy.empty() ? "" : ", ") + ("\"" + json_escape(name) + "\": " + json_number(sum));
  return "{\"micro_steps\": " + std::to_string(window.micro_steps) + ", \"loss_sum\": " +
         json_number(window.loss_sum) + ", \"policy\": {" + policy + "}}";
}

LogWindow read_log_window(const boost::json::object& obj, const std::string& path) {
  const auto bad = [&path](const std::string& what) {
    return FormatError(path + ": log_window." + what + " is missing or mistyped");
  };
  LogWindow window;
  const auto* steps = obj.if_contains("micro_steps");
  if (!steps || !steps->is_int64() || steps->as_int64() < 0) throw bad("micro_steps");
  window.micro_steps = steps->as_int64();
  const auto* loss = obj.if_contains("loss_sum");
  if (!loss || !loss->is_number()) throw bad("loss_sum");
  window.loss_sum = loss->to_number<double>();
  const auto* policy = obj.if_contains("policy");
  if (!policy || !policy->is_object()) throw bad("policy");
  for (const auto& [name, value] : policy->as_object()) {
    if (!value.is_number()) throw bad("policy." + std::string(name));
    window.policy_sums[std::string(name)] = value.to_number<double>();
  }
  return window;
}

}  // namespace shardkit::train
