// shardkit::nn::Dropout: torch::nn::Dropout's behaviour (zero each element with probability p in
// training, scale the rest by 1 / (1 - p)) with a faster random stream on CPU.
//
// PyTorch draws CPU dropout masks one element at a time from its Mersenne Twister
// (bernoulli_), which took ~10% of an ACT training step. Here each element's keep bit is a
// counter-based hash of (a 64-bit seed, the element's index): one seed is drawn from the default
// CPU generator per call, so torch::manual_seed and saved RNG states still fix every mask, and
// the mask does not depend on the thread count. Backward regenerates the mask from the seed
// instead of keeping it. Other devices use torch::dropout.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

namespace shardkit::nn {

/// `x` with each element zeroed with probability `p` and the rest scaled by 1 / (1 - p) when
/// `training`; `x` itself otherwise or when p is 0. p must be in [0, 1].
torch::Tensor dropout(const torch::Tensor& x, double p, bool training);

/// A module around dropout(), in training mode as modules start; a drop-in for torch::nn::Dropout.
class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(double p = 0.5);
  void reset() override {}
  torch::Tensor forward(const torch::Tensor& x);
  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(Dropout);

}  // namespace shardkit::nn
