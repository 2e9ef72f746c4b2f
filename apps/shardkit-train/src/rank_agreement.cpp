// Cross-rank agreement: broadcasts of rank 0's decisions, configuration comparison, metric reduction.
#include "rank_agreement.hpp"

#include <torch/torch.h>

#include <functional>
#include <sstream>

#include "shardkit/error.hpp"

namespace shardkit::train {
namespace {

/// The values that must match across ranks (plugin search paths may differ per node).
std::map<std::string, std::string> comparable(const Config& config) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : config.values())
    if (key != "plugins" && key != "plugin_path") out[key] = to_string(value);
  return out;
}

std::string serialise(const std::map<std::string, std::string>& values) {
  std::ostringstream out;
  for (const auto& [key, value] : values) out << key << '\0' << value << '\0';
  return out.str();
}

std::map<std::string, std::string> parse(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto k_end = text.find('\0', pos);
    const auto v_end = text.find('\0', k_end + 1);
    if (k_end == std::string::npos || v_end == std::string::npos) break;
    out[text.substr(pos, k_end - pos)] = text.substr(k_end + 1, v_end - k_end - 1);
    pos = v_end + 1;
  }
  return out;
}

}  // namespace

std::string from_rank0(CommGroup& group, const std::string& value) {
  if (group.size() == 1) return value;
  return group.all_gather_bytes(group.rank() == 0 ? value : std::string())[0];
}

void rank0_verdict(CommGroup& group, const std::function<std::string()>& check) {
  std::string mine;
  if (group.rank() == 0) {
    try {
      mine = check();
    } catch (const std::exception& e) {
      mine = e.what();
      if (mine.empty()) mine = "rank 0's check failed";
    }
  }
  const auto verdict = from_rank0(group, mine);
  if (!verdict.empty()) throw ConfigError(verdict);
}

void check_same_config(CommGroup& group, const Config& config) {
  if (group.size() == 1) return;
  const auto mine = serialise(comparable(config));
  const auto hash = std::to_string(std::hash<std::string>{}(mine));
  const auto hashes = group.all_gather_bytes(hash);
  bool same = true;
  for (const auto& h : hashes) same = same && h == hashes[0];
  if (same) return;
  // Rare path: gather the values themselves to say what differs.
  const auto all = group.all_gather_bytes(mine);
  const auto reference = parse(all[0]);
  std::ostringstream msg;
  msg << "the ranks were started with different configurations (every rank must get the same "
         "flags and config file):";
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (hashes[r] == hashes[0]) continue;
    const auto other = parse(all[r]);
    int shown = 0;
    for (const auto& [key, value] : other) {
      auto it = reference.find(key);
      const std::string ref = it == reference.end() ? "<unset>" : it->second;
      if (ref == value || shown >= 3) continue;
      msg << "\n  rank " << r << ": --" << key << "=" << value << " (rank 0: " << ref << ")";
      ++shown;
    }
    if (shown == 0) msg << "\n  rank " << r << ": differs from rank 0";
  }
  throw ConfigError(msg.str());
}

void reduce_metrics(CommGroup& group, MetricsRecord& record) {
  if (group.size() == 1) return;
  // Every rank reads the same dataset, so either all have a token count or none has.
  auto sums = torch::tensor({record.loss, record.samples_per_s, record.tokens_per_s.value_or(0.0)}, torch::kFloat64);
  auto maxes = torch::tensor({record.update_s, record.dataloading_s, record.preprocessing_s, record.step_s},
                             torch::kFloat64);
  group.all_reduce(sums, ReduceOp::Sum);
  group.all_reduce(maxes, ReduceOp::Max);
  record.loss = sums[0].item<double>() / group.size();
  record.samples_per_s = sums[1].item<double>();
  if (record.tokens_per_s) record.tokens_per_s = sums[2].item<double>();
  record.update_s = maxes[0].item<double>();
  record.dataloading_s = maxes[1].item<double>();
  record.preprocessing_s = maxes[2].item<double>();
  record.step_s = maxes[3].item<double>();
  // Policy metrics are averaged like the loss; every rank's policy reports the same names.
  if (record.policy.empty()) return;
  std::vector<double> values;
  for (const auto& [name, value] : record.policy) values.push_back(value);
  auto policy = torch::tensor(values, torch::kFloat64);
  group.all_reduce(policy, ReduceOp::Sum);
  std::size_t i = 0;
  for (auto& [name, value] : record.policy) value = policy[static_cast<std::int64_t>(i++)].item<double>() / group.size();
}

int stop_signal_of_any_rank(CommGroup& group, int mine) {
  return stop_reasons_of_any_rank(group, {mine, false}).signal;
}

StopReasons stop_reasons_of_any_rank(CommGroup& group, StopReasons mine) {
  if (group.size() == 1) return mine;
  auto both = torch::tensor({mine.signal, mine.failed_save ? 1 : 0}, torch::kInt32);
  group.all_reduce(both, ReduceOp::Max);
  return {both[0].item<int>(), both[1].item<int>() != 0};
}

}  // namespace shardkit::train
