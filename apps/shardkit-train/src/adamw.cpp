// AdamW with name-keyed state: the arithmetic of torch.optim.AdamW, through PyTorch's fused kernel
// (torch.optim.AdamW(fused=True)) for contiguous float parameters.
#include "adamw.hpp"

#include <ATen/ops/_fused_adamw.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit {

AdamW::AdamW(std::vector<ParamShard> params, AdamWOptions options, Replicas step_replicas)
    : params_(std::move(params)), options_(options), step_replicas_(step_replicas) {
  std::set<std::string> seen;
  for (const auto& p : params_) {
    if (!seen.insert(p.name).second) throw RuntimeError("AdamW: parameter '" + p.name + "' given twice");
    double factor = 1.0;
    for (const auto& [prefix, f] : options_.lr_factors)
      if (p.name.rfind(prefix, 0) == 0) {
        factor = f;
        break;
      }
    lr_factor_.push_back(factor);
  }
}

AdamW::Slot& AdamW::slot_for(const ParamShard& p) {
  auto it = slots_.find(p.name);
  if (it != slots_.end()) return it->second;
  torch::NoGradGuard no_grad;
  Slot slot;
  slot.exp_avg = torch::zeros_like(p.param, torch::MemoryFormat::Contiguous);
  slot.exp_avg_sq = torch::zeros_like(p.param, torch::MemoryFormat::Contiguous);
  slot.step = torch::zeros({}, torch::kFloat32);
  return slots_.emplace(p.name, std::move(slot)).first->second;
}

namespace {

/// Whether `p` and its gradient suit PyTorch's fused AdamW kernel: the same device and floating
/// dtype, both contiguous (the kernel walks them as flat arrays).
bool fusable(const torch::Tensor& p, const torch::Tensor& grad) {
  return (p.device().is_cpu() || p.device().is_cuda()) && p.is_contiguous() && grad.is_contiguous() &&
         grad.scalar_type() == p.scalar_type() && grad.device() == p.device() &&
         (p.scalar_type() == torch::kFloat32 || p.scalar_type() == torch::kFloat64);
}

}  // namespace

void AdamW::step(double group_lr) {
  torch::NoGradGuard no_grad;
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  // Parameters the fused kernel takes, batched per (learning-rate factor, device): one pass over
  // each tensor instead of seven, the same per-element arithmetic in fp32.
  struct Batch {
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  };
  std::map<std::pair<double, std::string>, Batch> fused;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    const double lr = group_lr * lr_factor_[i];
    const auto& grad = p.param.grad();
    if (!grad.defined()) continue;
    auto& s = slot_for(p);
    s.step.add_(1);
    if (fusable(p.param, grad) && s.exp_avg.is_contiguous() && s.exp_avg.device() == p.param.device()) {
      auto& b = fused[{lr, p.param.device().str()}];
      b.params.push_back(p.param);
      b.grads.push_back(grad);
      b.exp_avgs.push_back(s.exp_avg);
      b.exp_avg_sqs.push_back(s.exp_avg_sq);
      b.steps.push_back(s.step);
      continue;
    }
    const double step = s.step.item<float>();
    p.param.mul_(1.0 - lr * options_.weight_decay);
    s.exp_avg.mul_(beta1).add_(grad, 1.0 - beta1);
    s.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1.0 - beta2);
    const double bias_correction1 = 1.0 - std::pow(beta1, step);
    const double bias_correction2 = 1.0 - std::pow(beta2, step);
    const double step_size = lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    auto denom = (s.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(options_.eps);
    p.param.addcdiv_(s.exp_avg, denom, -step_size);
  }
  for (auto& [key, b] : fused)
    at::_fused_adamw_(b.params, b.grads, b.exp_avgs, b.exp_avg_sqs, /*max_exp_avg_sqs=*/{}, b.steps, key.first, beta1,
                      beta2, options_.weight_decay, options_.eps, /*amsgrad=*/false, /*maximize=*/false);
}

void AdamW::zero_grad() {
  for (auto& p : params_) p.param.mutable_grad() = torch::Tensor();
}

void AdamW::state(ShardedState& out) {
  for (const auto& p : params_) {
    auto& s = slot_for(p);
    const std::string prefix = "optimizer.state." + p.name + ".";
    out.add(prefix + "exp_avg", s.exp_avg, p.layout, p.replicas);
    out.add(prefix + "exp_avg_sq", s.exp_avg_sq, p.layout, p.replicas);
    out.add(prefix + "step", s.step, ShardLayout::whole({}), step_replicas_);
  }
}

std::string AdamW::param_groups_json(double current_lr) const {
  std::ostringstream out;
  out << "[\n  {\n"
      << "    \"lr\": " << to_string(Value(current_lr)) << ",\n"
      << "    \"initial_lr\": " << to_string(Value(options_.lr)) << ",\n"
      << "    \"betas\": [" << to_string(Value(options_.beta1)) << ", "
      << to_string(Value(options_.beta2)) << "],\n"
      << "    \"eps\": " << to_string(Value(options_.eps)) << ",\n"
      << "    \"weight_decay\": " << to_string(Value(options_.weight_decay)) << ",\n"
      << "    \"amsgrad\": false,\n    \"params\": [";
  for (std::size_t i = 0; i < params_.size(); ++i)
    out << (i ? ", " : "") << '"' << params_[i].name << '"';
  out << "]\n  }\n]\n";
  return out.str();
}

void AdamW::param_groups(ShardedState& out, double current_lr) const {
  const std::string group = "optimizer.param_groups.0.";
  std::vector<std::string> names;
  for (const auto& p : params_) names.push_back(p.name);
  const std::pair<const char*, ObjectValue> fields[] = {
      {"lr", current_lr},
      {"initial_lr", options_.lr},
      {"betas", std::vector<double>{options_.beta1, options_.beta2}},
      {"eps", options_.eps},
      {"weight_decay", options_.weight_decay},
      {"amsgrad", false},
      {"maximize", false},
      {"foreach", std::monostate{}},
      {"capturable", false},
      {"differentiable", false},
      {"fused", std::monostate{}},
      {"decoupled_weight_decay", true},
      {"params", std::move(names)},
  };
  for (const auto& [field, value] : fields) out.objects[group + field] = value;
}

std::vector<std::string> AdamW::param_group_differences(const ShardedState& loaded) const {
  std::vector<std::string> differences;
  const auto text = [](double v) { return to_string(Value(v)); };
  const auto compare = [&](const char* field, const std::vector<double>& ours) {
    const auto it = loaded.objects.find(std::string("optimizer.param_groups.0.") + field);
    if (it == loaded.objects.end()) return;
    std::vector<double> theirs;
    if (const auto* d = std::get_if<double>(&it->second)) theirs = {*d};
    else if (const auto* i = std::get_if<std::int64_t>(&it->second)) theirs = {static_cast<double>(*i)};
    else if (const auto* v = std::get_if<std::vector<double>>(&it->second)) theirs = *v;
    if (theirs == ours) return;
    std::string saved, wanted;
    for (std::size_t k = 0; k < theirs.size(); ++k) saved += (k ? "," : "") + text(theirs[k]);
    for (std::size_t k = 0; k < ours.size(); ++k) wanted += (k ? "," : "") + text(ours[k]);
    differences.push_back(std::string(field) + "=" + (saved.empty() ? "?" : saved) + " (the options say " +
                          wanted + ")");
  };
  compare("betas", {options_.beta1, options_.beta2});
  compare("eps", {options_.eps});
  compare("weight_decay", {options_.weight_decay});
  return differences;
}

}  // namespace shardkit
