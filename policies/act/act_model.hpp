// ACT's network as LeRobot 0.6.1's `ACT` module builds it: VAE encoder over the action chunk,
// ResNet camera features, transformer encoder over [latent, state, env state, camera tokens],
// decoder queries, action head. Parameter and buffer names equal LeRobot's under `model.`; its
// linear layers and attention modules can carry LoRA adapters (shardkit::nn::LoraLinear and shardkit::nn::MultiheadAttention).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>

#include "act_config.hpp"
#include "act_layers.hpp"
#include "resnet_backbone.hpp"

namespace shardkit::act {

/// (B, chunk_size, action_dim) actions and the latent distribution's (mu, log sigma^2), both
/// undefined when the VAE branch did not run.
struct ActOutput {
  torch::Tensor actions, mu, log_sigma_x2;
};

class ACTImpl : public torch::nn::Module {
 public:
  explicit ACTImpl(const ActConfig& config);
  /// `batch`: observation.state (B, S), observation.environment_state (B, E), each camera
  /// (B, 3, H, W), and in training with the VAE, action (B, chunk, A) and action_is_pad (B, chunk).
  ActOutput forward(const std::map<std::string, torch::Tensor>& batch);

  /// Parameters of the image backbone (LeRobot gives them their own learning rate).
  std::vector<torch::Tensor> backbone_parameters() const;

 private:
  ActConfig config_;
  ACTEncoder vae_encoder{nullptr}, encoder{nullptr};
  ACTDecoder decoder{nullptr};
  torch::nn::Embedding vae_encoder_cls_embed{nullptr}, encoder_1d_feature_pos_embed{nullptr}, decoder_pos_embed{nullptr};
  // LoRA layers (LeRobot's nn.Linear): --peft.* can put adapters on them.
  nn::LoraLinear vae_encoder_robot_state_input_proj{nullptr}, vae_encoder_action_input_proj{nullptr},
      vae_encoder_latent_output_proj{nullptr}, encoder_robot_state_input_proj{nullptr},
      encoder_env_state_input_proj{nullptr}, encoder_latent_input_proj{nullptr}, action_head{nullptr};
  torch::nn::Conv2d encoder_img_feat_input_proj{nullptr};
  ResNetTrunk backbone{nullptr};
  torch::Tensor vae_encoder_pos_enc;
};
TORCH_MODULE(ACT);

}  // namespace shardkit::act
