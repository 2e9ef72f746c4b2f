// Mixed-precision policy resolution and the autocast guard.
#include "shardkit/precision.hpp"

#include <ATen/autocast_mode.h>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit {
namespace {

std::optional<torch::ScalarType> dtype_of(const std::string& text, const std::string& flag) {
  if (text.empty()) return std::nullopt;
  if (text == "bfloat16" || text == "bf16") return torch::kBFloat16;
  if (text == "float16" || text == "fp16" || text == "half") return torch::kFloat16;
  if (text == "float32" || text == "fp32" || text == "float") return torch::kFloat32;
  throw ConfigError(flag + "=" + text + ": expected bfloat16, float16 or float32");
}

const char* name_of(torch::ScalarType t) {
  return t == torch::kBFloat16 ? "bfloat16" : t == torch::kFloat16 ? "float16" : "float32";
}

}  // namespace

std::string PrecisionPolicy::describe() const {
  if (!active()) return "no (fp32)";
  std::string out = mode + " (params " + name_of(*param_dtype) + ", reduce " +
                    (reduce_dtype ? name_of(*reduce_dtype) : "float32") + ", fp32 masters";
  if (output_dtype) out += std::string(", output ") + name_of(*output_dtype);
  return out + ")";
}

PrecisionPolicy resolve_precision(const std::string& mode, const PrecisionFields& fields) {
  if (mode != "no" && mode != "bf16" && mode != "fp16")
    throw ConfigError("--accelerator.mixed_precision=" + mode + ": expected no, bf16 or fp16");
  PrecisionPolicy p;
  p.mode = mode;
  p.cast_forward_inputs = fields.cast_forward_inputs;
  const bool any_field = !fields.param_dtype.empty() || !fields.reduce_dtype.empty() || !fields.output_dtype.empty();
  if (any_field) {
    if (fields.param_dtype.empty())
      throw ConfigError(fields.prefix + (fields.reduce_dtype.empty() ? "output_dtype" : "reduce_dtype") +
                        " is set but " + fields.prefix + "param_dtype is not: once any field of the mixed-precision "
                        "policy is set the policy is built from its fields only; set " + fields.prefix +
                        "param_dtype=bfloat16 (or float16, float32)");
    p.param_dtype = dtype_of(fields.param_dtype, fields.prefix + "param_dtype");
    p.reduce_dtype = dtype_of(fields.reduce_dtype, fields.prefix + "reduce_dtype");
    p.output_dtype = dtype_of(fields.output_dtype, fields.prefix + "output_dtype");
    for (const auto& [value, name] : {std::pair{p.param_dtype, "param_dtype"}, std::pair{p.reduce_dtype, "reduce_dtype"},
                                      std::pair{p.output_dtype, "output_dtype"}})
      if (value == torch::kFloat16 && mode != "fp16")
        throw ConfigError(fields.prefix + name + "=float16 needs --accelerator.mixed_precision=fp16 (which builds "
                          "the dynamic loss scaler float16 gradients need); use bfloat16, or pass "
                          "--accelerator.mixed_precision=fp16");
    if (p.param_dtype == torch::kFloat32) p.param_dtype.reset();
    return p;
  }
  if (mode == "bf16") p.param_dtype = torch::kBFloat16;
  if (mode == "fp16") p.param_dtype = torch::kFloat16;
  return p;
}

PrecisionPolicy precision_of(const PluginContext& ctx, const PrecisionFields& fields) {
  const auto* config = ctx.full_config;
  const bool given = config != nullptr && config->has("accelerator.mixed_precision");
  return resolve_precision(given ? config->get_string("accelerator.mixed_precision") : "no", fields);
}

AutocastGuard::AutocastGuard(const PrecisionPolicy& policy, torch::Device device) {
  if (!policy.active()) return;
  active_ = true;
  device_type_ = device.type();
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, *policy.param_dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
}

}  // namespace shardkit
