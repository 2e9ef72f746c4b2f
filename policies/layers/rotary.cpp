// Rotary position embeddings with a two-pass forward and backward (see rotary.hpp).
#include "shardkit/nn/rotary.hpp"

#include <torch/autograd.h>

namespace shardkit::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// out = a * cos + rotate(a) * sin, where rotate(a) = [-a2, a1], or with `transposed` its
/// transpose [a2, -a1] (what carries a gradient back through the rotation).
torch::Tensor rotate_into(const torch::Tensor& a, const torch::Tensor& cos, const torch::Tensor& sin, bool transposed) {
  const auto half = a.size(-1) / 2;
  auto out = a * cos;
  const double sign = transposed ? 1.0 : -1.0;
  // The first half of the result takes the second half of a (and the other way round); sin's
  // half is the one at the result's position forward, at a's position backward.
  out.narrow(-1, 0, half).addcmul_(a.narrow(-1, half, half), sin.narrow(-1, transposed ? half : 0, half), sign);
  out.narrow(-1, half, half).addcmul_(a.narrow(-1, 0, half), sin.narrow(-1, transposed ? 0 : half, half), -sign);
  return out;
}

class Rotary : public torch::autograd::Function<Rotary> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    return rotate_into(x, cos, sin, false);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    return {rotate_into(grad_outputs[0], saved[0], saved[1], true), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const auto dtype = x.scalar_type();
  if (!cos.requires_grad() && !sin.requires_grad() && cos.scalar_type() == dtype && sin.scalar_type() == dtype &&
      x.size(-1) % 2 == 0 && cos.size(-1) == x.size(-1) && sin.size(-1) == x.size(-1))
    return Rotary::apply(x, cos, sin);
  const auto half = x.size(-1) / 2;
  const auto rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

}  // namespace shardkit::nn
