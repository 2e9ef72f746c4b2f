// ACT's options: LeRobot's ACTConfig field names and defaults, given as --policy.<name>.
#pragma once

#include <shardkit/options.hpp>

namespace shardkit::act {

inline constexpr OptionSpec kActOptions[] = {
    {"n_obs_steps", OptionType::Int, "1", "Observation steps given to the policy (ACT handles 1)", "1", "1", nullptr},
    {"chunk_size", OptionType::Int, "100", "Actions predicted per forward (the action chunk)", "1", nullptr, nullptr},
    {"n_action_steps", OptionType::Int, "100", "Actions of a chunk executed before the next inference (<= chunk_size)", "1",
     nullptr, nullptr},
    {"vision_backbone", OptionType::String, "resnet18", "torchvision ResNet that encodes each camera", nullptr, nullptr,
     "resnet18|resnet34"},
    {"pretrained_backbone_weights", OptionType::String, "ResNet18_Weights.IMAGENET1K_V1",
     "null, or torchvision's ImageNet weights read from the local torch hub cache (never downloaded)", nullptr,
     nullptr, nullptr},
    {"replace_final_stride_with_dilation", OptionType::Bool, "false", "Dilate instead of striding in layer4 (not with "
     "resnet18/34, as in torchvision)", nullptr, nullptr, nullptr},
    {"pre_norm", OptionType::Bool, "false", "Pre-norm transformer layers (post-norm by default)", nullptr, nullptr, nullptr},
    {"dim_model", OptionType::Int, "512", "Transformer width", "1", nullptr, nullptr},
    {"n_heads", OptionType::Int, "8", "Attention heads (divides dim_model)", "1", nullptr, nullptr},
    {"dim_feedforward", OptionType::Int, "3200", "Feed-forward width", "1", nullptr, nullptr},
    {"feedforward_activation", OptionType::String, "relu", "Feed-forward activation", nullptr, nullptr, "relu|gelu|glu"},
    {"n_encoder_layers", OptionType::Int, "4", "Transformer encoder layers (ACTEncoderLayer wrap units)", "1", nullptr, nullptr},
    {"n_decoder_layers", OptionType::Int, "1", "Transformer decoder layers (ACTDecoderLayer wrap units)", "1", nullptr, nullptr},
    {"use_vae", OptionType::Bool, "true", "Train with the variational objective (VAE encoder over the action chunk)",
     nullptr, nullptr, nullptr},
    {"latent_dim", OptionType::Int, "32", "VAE latent size", "1", nullptr, nullptr},
    {"n_vae_encoder_layers", OptionType::Int, "4", "VAE encoder layers", "1", nullptr, nullptr},
    {"temporal_ensemble_coeff", OptionType::String, "null", "null, or the exponential weight of temporal ensembling in "
     "select_action (needs n_action_steps=1)", nullptr, nullptr, nullptr},
    {"dropout", OptionType::Float, "0.1", "Dropout in the transformer layers", "0", "1", nullptr},
    {"kl_weight", OptionType::Float, "10.0", "Weight of the KL term in the loss", "0", nullptr, nullptr},
    {"normalization_mapping", OptionType::String, R"({"VISUAL": "MEAN_STD", "STATE": "MEAN_STD", "ACTION": "MEAN_STD"})",
     "Feature type -> LeRobot normalization mode, applied by the trainer with the dataset's statistics", nullptr,
     nullptr, nullptr},
    {"optimizer_lr", OptionType::Float, "1e-5", "LeRobot's preset learning rate, used unless --optimizer.lr is given",
     "0", nullptr, nullptr},
    {"optimizer_weight_decay", OptionType::Float, "1e-4", "LeRobot's preset weight decay, used unless "
     "--optimizer.weight_decay is given", "0", nullptr, nullptr},
    {"optimizer_lr_backbone", OptionType::Float, "1e-5", "Learning rate of the ResNet backbone "
     "(model.backbone.*), whatever --optimizer.lr is, as LeRobot's ACT parameter groups", "0", nullptr, nullptr},
};

}  // namespace shardkit::act
