// ACT's configuration: LeRobot's ACTConfig fields (names and defaults) read from --policy.*,
// plus the input and output features taken from the dataset.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <shardkit/options.hpp>
#include <shardkit/plugin.hpp>

#include "act_layers.hpp"

namespace shardkit::act {

struct ActConfig {
  std::int64_t n_obs_steps = 1, chunk_size = 100, n_action_steps = 100;
  std::string vision_backbone = "resnet18";
  std::string pretrained_backbone_weights;  ///< "" = null
  bool replace_final_stride_with_dilation = false;
  LayerOptions layer;  ///< dim_model, n_heads, dim_feedforward, feedforward_activation, dropout, pre_norm
  std::int64_t n_encoder_layers = 4, n_decoder_layers = 1;
  bool use_vae = true;
  std::int64_t latent_dim = 32, n_vae_encoder_layers = 4;
  std::optional<double> temporal_ensemble_coeff;
  double kl_weight = 10.0;
  double optimizer_lr = 1e-5, optimizer_weight_decay = 1e-4, optimizer_lr_backbone = 1e-5;

  // From the dataset's features.
  std::int64_t state_dim = 0;                ///< observation.state (0 = absent)
  std::int64_t env_state_dim = 0;            ///< observation.environment_state (0 = absent)
  std::vector<std::string> image_features;   ///< observation.image* features (C, H, W)
  std::vector<std::vector<std::int64_t>> image_shapes;  ///< their shapes
  std::int64_t action_dim = 0;
};

/// Reads and checks the options and features (ConfigError naming the option otherwise).
ActConfig read_config(const PluginContext& ctx);

}  // namespace shardkit::act
