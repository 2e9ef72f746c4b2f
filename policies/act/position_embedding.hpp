// ACT's fixed sinusoidal position embeddings, computed as LeRobot computes them.
#pragma once

#include <torch/torch.h>

namespace shardkit::act {

/// (positions, dimension): angle pos / 10000^(2*(j/2)/dimension) in double precision, sin on
/// even columns and cos on odd ones, then float32 ("Attention is all you need").
torch::Tensor sinusoidal_1d(std::int64_t positions, std::int64_t dimension);

/// (1, 2*dimension, H, W) for a (B, C, H, W) feature map: the row and column indices
/// normalised to (0, 2 pi], each embedded with `dimension` interleaved sin/cos channels,
/// rows first (LeRobot's ACTSinusoidalPositionEmbedding2d).
torch::Tensor sinusoidal_2d(const torch::Tensor& feature_map, std::int64_t dimension);

}  // namespace shardkit::act
