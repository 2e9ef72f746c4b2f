// The dynamic loss scaler of fp16 training (PyTorch's GradScaler rules), saved as scaler_state.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/comm.hpp"

namespace shardkit::train {

/// Scales the loss before backward and unscales gradients before the update; an update whose
/// gradients hold inf or NaN on any rank is skipped and the scale halved; after
/// `growth_interval` good updates in a row the scale doubles.
class LossScaler {
 public:
  LossScaler(double init_scale, std::int64_t growth_interval);
  double scale() const { return scale_; }
  /// Divides `grads` by the scale in place; true when they are finite on every rank of `world`
  /// (one all-reduce).
  bool unscale(const std::vector<torch::Tensor>& grads, CommGroup& world);
  /// After each update: `skipped` = the gradients overflowed.
  void update(bool skipped);
  std::int64_t skipped_updates() const { return skipped_; }
  /// torch.amp.GradScaler.state_dict() as JSON (scale, growth_factor, backoff_factor,
  /// growth_interval, _growth_tracker) plus shardkit's skipped_updates.
  std::string state_json() const;
  /// Reads state_json() output; FormatError naming `origin` when malformed.
  void load_json(const std::string& text, const std::string& origin);

 private:
  double scale_;
  double growth_factor_ = 2.0, backoff_factor_ = 0.5;
  std::int64_t growth_interval_;
  std::int64_t growth_tracker_ = 0;
  std::int64_t skipped_ = 0;
};

}  // namespace shardkit::train
