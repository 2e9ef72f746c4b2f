// ACT's options with LeRobot's names and defaults, and the checks LeRobot's ACTConfig makes.
#include "act_config.hpp"
#include "act_options.hpp"

#include <cstdlib>

#include <shardkit/error.hpp>
#include <shardkit/policy.hpp>

namespace shardkit::act {
namespace {


bool is_null(const std::string& v) { return v.empty() || v == "null" || v == "None" || v == "none"; }

}  // namespace

ActConfig read_config(const PluginContext& ctx) {
  const auto& o = ctx.options;
  ActConfig c;
  c.n_obs_steps = o.get_int("n_obs_steps");
  c.chunk_size = o.get_int("chunk_size");
  c.n_action_steps = o.get_int("n_action_steps");
  c.vision_backbone = o.get_string("vision_backbone");
  const auto weights = o.get_string("pretrained_backbone_weights");
  c.pretrained_backbone_weights = is_null(weights) ? "" : weights;
  c.replace_final_stride_with_dilation = o.get_bool("replace_final_stride_with_dilation");
  c.layer.pre_norm = o.get_bool("pre_norm");
  c.layer.dim_model = o.get_int("dim_model");
  c.layer.n_heads = o.get_int("n_heads");
  c.layer.dim_feedforward = o.get_int("dim_feedforward");
  c.layer.activation = o.get_string("feedforward_activation");
  c.layer.dropout = o.get_float("dropout");
  c.n_encoder_layers = o.get_int("n_encoder_layers");
  c.n_decoder_layers = o.get_int("n_decoder_layers");
  c.use_vae = o.get_bool("use_vae");
  c.latent_dim = o.get_int("latent_dim");
  c.n_vae_encoder_layers = o.get_int("n_vae_encoder_layers");
  c.kl_weight = o.get_float("kl_weight");
  c.optimizer_lr = o.get_float("optimizer_lr");
  c.optimizer_weight_decay = o.get_float("optimizer_weight_decay");
  c.optimizer_lr_backbone = o.get_float("optimizer_lr_backbone");
  if (const auto coeff = o.get_string("temporal_ensemble_coeff"); !is_null(coeff)) {
    char* end = nullptr;
    const double v = std::strtod(coeff.c_str(), &end);
    if (end == coeff.c_str() || *end != '\0')
      throw ConfigError("--policy.temporal_ensemble_coeff=" + coeff + " is not a number or null");
    c.temporal_ensemble_coeff = v;
  }

  if (c.n_action_steps > c.chunk_size)
    throw ConfigError("--policy.n_action_steps=" + std::to_string(c.n_action_steps) + " exceeds --policy.chunk_size=" +
                      std::to_string(c.chunk_size) + ": a chunk is the most actions one inference gives");
  if (c.temporal_ensemble_coeff && c.n_action_steps > 1)
    throw ConfigError("--policy.temporal_ensemble_coeff needs --policy.n_action_steps=1 (inference runs at every "
                      "step to form the ensemble), not " + std::to_string(c.n_action_steps));
  if (c.layer.dim_model % c.layer.n_heads != 0)
    throw ConfigError("--policy.dim_model=" + std::to_string(c.layer.dim_model) + " is not divisible by "
                      "--policy.n_heads=" + std::to_string(c.layer.n_heads));
  if (c.layer.dim_model % 2 != 0)
    throw ConfigError("--policy.dim_model must be even (the camera position embedding splits it in rows and columns)");
  if (c.layer.activation == "glu" && c.layer.dim_feedforward % 2 != 0)
    throw ConfigError("--policy.feedforward_activation=glu halves the feed-forward width: --policy.dim_feedforward "
                      "must be even");
  if (c.replace_final_stride_with_dilation)
    throw ConfigError("--policy.replace_final_stride_with_dilation=true needs a Bottleneck ResNet; " +
                      c.vision_backbone + " (BasicBlock) has no dilation, as in torchvision");

  for (const auto& [name, shape] : ctx.features) {
    if (name == "observation.state") c.state_dim = feature_numel(ctx, name, "act");
    else if (name == "observation.environment_state") c.env_state_dim = feature_numel(ctx, name, "act");
    else if (name.rfind("observation.image", 0) == 0 && name.find("_is_pad") == std::string::npos) {
      if (shape.size() != 3 || shape[0] != 3)
        throw ConfigError("act: camera feature '" + name + "' has shape of " + std::to_string(shape.size()) +
                          " dimensions; expected (3, height, width)");
      c.image_features.push_back(name);
      c.image_shapes.push_back(shape);
    }
  }
  c.action_dim = feature_numel(ctx, "action", "act");
  if (c.image_features.empty() && c.env_state_dim == 0)
    throw ConfigError("act needs at least one camera (observation.images.*) or observation.environment_state among "
                      "the dataset's features, as LeRobot's ACT does");
  return c;
}

}  // namespace shardkit::act
