// Mixed precision, resolved once in core for every backend: --accelerator.mixed_precision and FSDP's policy fields.
//
//   auto precision = shardkit::resolve_precision("bf16", {});   // param_dtype bf16, reduce in fp32
//   shardkit::AutocastGuard guard(precision, device);             // whole-parameter backends
#pragma once

#include <optional>
#include <string>

#include <torch/types.h>

#include "shardkit/plugin.hpp"

namespace shardkit {

/// What mixed precision a run uses. Without a param_dtype everything runs in the parameters'
/// own dtype (fp32). The optimizer always steps fp32 masters, and checkpoints save them.
struct PrecisionPolicy {
  std::string mode = "no";                        ///< --accelerator.mixed_precision: no, bf16, fp16
  std::optional<torch::ScalarType> param_dtype;   ///< compute dtype of parameters in forward/backward
  std::optional<torch::ScalarType> reduce_dtype;  ///< gradient reduction dtype (unset: the parameters' own)
  std::optional<torch::ScalarType> output_dtype;  ///< the loss is cast to it (unset: as computed)
  bool cast_forward_inputs = true;                ///< floating inputs of units cast to param_dtype
  bool active() const { return param_dtype.has_value(); }
  /// fp16 needs a dynamic loss scaler (the trainer builds it).
  bool needs_loss_scaler() const { return mode == "fp16"; }
  /// "no", or e.g. "bf16 (params bfloat16, reduce float32)".
  std::string describe() const;
};

/// FSDP's mixed-precision policy fields as given ("" = unset), and the flag prefix that messages
/// put before a field's name (the backend's, e.g. "--accelerator.<backend>.mixed_precision_policy.").
struct PrecisionFields {
  std::string param_dtype, reduce_dtype, output_dtype;
  bool cast_forward_inputs = true;
  std::string prefix;
};

/// LeRobot's rules: once any dtype field is set the policy is built from the fields only and
/// param_dtype must be set; otherwise `mode` bf16/fp16 gives param_dtype bf16/fp16; an unset
/// reduce_dtype reduces in the parameters' own dtype; float16 anywhere needs mode fp16.
/// Throws ConfigError naming the flag and the fix.
PrecisionPolicy resolve_precision(const std::string& mode, const PrecisionFields& fields = {});

/// The run's --accelerator.mixed_precision mode resolved with `fields` (none: what ddp, single
/// and zero use; fsdp passes its policy fields). Mode "no" when the context carries no
/// configuration.
PrecisionPolicy precision_of(const PluginContext& ctx, const PrecisionFields& fields = {});

/// Runs LibTorch's autocast at `policy.param_dtype` on `device` for its lifetime (nothing when
/// the policy is not active): mixed precision for backends that keep fp32 parameters.
class AutocastGuard {
 public:
  AutocastGuard(const PrecisionPolicy& policy, torch::Device device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool active_ = false;
  torch::DeviceType device_type_ = torch::kCPU;
  bool previous_enabled_ = false;
  torch::ScalarType previous_dtype_ = torch::kBFloat16;
};

}  // namespace shardkit
