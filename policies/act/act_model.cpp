// ACT's forward pass, step for step as LeRobot 0.6.1's ACT.forward.
#include "act_model.hpp"

#include <shardkit/error.hpp>

#include "position_embedding.hpp"

namespace shardkit::act {

ACTImpl::ACTImpl(const ActConfig& config) : config_(config) {
  const auto D = config.layer.dim_model;
  // LeRobot's nn.Linear layers, as LoRA layers (adapters only when --peft.* puts them on).
  const auto linear = [](std::int64_t in, std::int64_t out) { return nn::LoraLinear(in, out, /*bias=*/true); };
  if (config.use_vae) {
    vae_encoder = register_module("vae_encoder", ACTEncoder(config.layer, config.n_vae_encoder_layers, /*first_position_only=*/true));
    vae_encoder_cls_embed = register_module("vae_encoder_cls_embed", torch::nn::Embedding(1, D));
    if (config.state_dim > 0)
      vae_encoder_robot_state_input_proj =
          register_module("vae_encoder_robot_state_input_proj", linear(config.state_dim, D));
    vae_encoder_action_input_proj = register_module("vae_encoder_action_input_proj", linear(config.action_dim, D));
    vae_encoder_latent_output_proj =
        register_module("vae_encoder_latent_output_proj", linear(D, config.latent_dim * 2));
    const auto tokens = 1 + config.chunk_size + (config.state_dim > 0 ? 1 : 0);
    vae_encoder_pos_enc = register_buffer("vae_encoder_pos_enc", sinusoidal_1d(tokens, D).unsqueeze(0));
  }
  if (!config.image_features.empty()) backbone = register_module("backbone", ResNetTrunk(config.vision_backbone));
  encoder = register_module("encoder", ACTEncoder(config.layer, config.n_encoder_layers));
  decoder = register_module("decoder", ACTDecoder(config.layer, config.n_decoder_layers));
  if (config.state_dim > 0)
    encoder_robot_state_input_proj = register_module("encoder_robot_state_input_proj", linear(config.state_dim, D));
  if (config.env_state_dim > 0)
    encoder_env_state_input_proj = register_module("encoder_env_state_input_proj", linear(config.env_state_dim, D));
  encoder_latent_input_proj = register_module("encoder_latent_input_proj", linear(config.latent_dim, D));
  if (!config.image_features.empty())
    encoder_img_feat_input_proj = register_module(
        "encoder_img_feat_input_proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(backbone->out_channels(), D, 1)));
  const auto n_1d_tokens = 1 + (config.state_dim > 0 ? 1 : 0) + (config.env_state_dim > 0 ? 1 : 0);
  encoder_1d_feature_pos_embed = register_module("encoder_1d_feature_pos_embed", torch::nn::Embedding(n_1d_tokens, D));
  decoder_pos_embed = register_module("decoder_pos_embed", torch::nn::Embedding(config.chunk_size, D));
  action_head = register_module("action_head", linear(D, config.action_dim));

  // LeRobot: xavier_uniform_ on every matrix of the transformer encoder and decoder.
  torch::NoGradGuard no_grad;
  for (auto* part : {static_cast<torch::nn::Module*>(encoder.get()), static_cast<torch::nn::Module*>(decoder.get())})
    for (auto& p : part->parameters())
      if (p.dim() > 1) torch::nn::init::xavier_uniform_(p);
}

std::vector<torch::Tensor> ACTImpl::backbone_parameters() const {
  return backbone ? backbone->parameters() : std::vector<torch::Tensor>{};
}

ActOutput ACTImpl::forward(const std::map<std::string, torch::Tensor>& batch) {
  const auto at = [&](const std::string& key) -> const torch::Tensor& {
    const auto it = batch.find(key);
    if (it == batch.end()) throw RuntimeError("act: the batch has no '" + key + "'");
    return it->second;
  };
  const auto& reference = config_.image_features.empty() ? at("observation.environment_state")
                                                          : at(config_.image_features.front());
  const auto B = reference.size(0);
  const auto D = config_.layer.dim_model;
  const auto options = reference.options().dtype(torch::kFloat32);

  ActOutput out;
  torch::Tensor latent;
  if (config_.use_vae && is_training() && batch.count("action")) {
    const auto cls = vae_encoder_cls_embed->weight.unsqueeze(0).expand({B, 1, D});
    std::vector<torch::Tensor> inputs{cls};
    if (config_.state_dim > 0) inputs.push_back(vae_encoder_robot_state_input_proj(at("observation.state")).unsqueeze(1));
    inputs.push_back(vae_encoder_action_input_proj(at("action")));
    const auto vae_in = torch::cat(inputs, 1);
    const auto pos = vae_encoder_pos_enc.clone().detach();
    const auto cls_joint_is_pad = torch::zeros({B, config_.state_dim > 0 ? 2 : 1}, options.dtype(torch::kBool));
    const auto key_padding_mask = torch::cat({cls_joint_is_pad, at("action_is_pad").to(torch::kBool)}, 1);
    // Sequence-first and contiguous (LeRobot passes the permuted view): every linear layer of the
    // VAE encoder then runs as one addmm instead of a copy, a matmul and a bias add.
    const auto cls_out =
        vae_encoder(vae_in.permute({1, 0, 2}).contiguous(), pos.permute({1, 0, 2}), key_padding_mask)[0];
    const auto params = vae_encoder_latent_output_proj(cls_out);
    out.mu = params.narrow(1, 0, config_.latent_dim);
    out.log_sigma_x2 = params.narrow(1, config_.latent_dim, config_.latent_dim);
    latent = out.mu + out.log_sigma_x2.div(2).exp() * torch::randn_like(out.mu);
  } else {
    latent = torch::zeros({B, config_.latent_dim}, options);
  }

  std::vector<torch::Tensor> tokens{encoder_latent_input_proj(latent)};
  std::vector<torch::Tensor> pos_embeds;
  for (const auto& row : encoder_1d_feature_pos_embed->weight.unsqueeze(1).unbind(0)) pos_embeds.push_back(row);
  if (config_.state_dim > 0) tokens.push_back(encoder_robot_state_input_proj(at("observation.state")));
  if (config_.env_state_dim > 0) tokens.push_back(encoder_env_state_input_proj(at("observation.environment_state")));
  for (const auto& camera : config_.image_features) {
    const auto features = backbone(at(camera));
    const auto cam_pos = sinusoidal_2d(features, D / 2).to(features.dtype());
    const auto projected = encoder_img_feat_input_proj(features);
    // (B, C, H, W) -> (H*W, B, C)
    for (const auto& t : projected.flatten(2).permute({2, 0, 1}).unbind(0)) tokens.push_back(t);
    for (const auto& t : cam_pos.flatten(2).permute({2, 0, 1}).unbind(0)) pos_embeds.push_back(t);
  }
  const auto encoder_in = torch::stack(tokens, 0);
  const auto encoder_pos = torch::stack(pos_embeds, 0);
  const auto encoder_out = encoder(encoder_in, encoder_pos);
  const auto decoder_in = torch::zeros({config_.chunk_size, B, D}, encoder_pos.options());
  const auto decoder_out =
      decoder(decoder_in, encoder_out, decoder_pos_embed->weight.unsqueeze(1), encoder_pos).transpose(0, 1);
  out.actions = action_head(decoder_out);
  return out;
}

}  // namespace shardkit::act
