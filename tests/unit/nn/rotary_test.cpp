// apply_rotary against transformers' apply_rotary_pos_emb formula in float64: output and x's
// gradient for a non-contiguous (B, heads, T, D) view with (T, D) tables and with per-row
// (B, 1, T, D) tables (packed sequences), and tables that require gradients (the formula's path).
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/nn/rotary.hpp>

namespace {

torch::Tensor formula(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const auto half = x.size(-1) / 2;
  return x * cos + torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1) * sin;
}

/// Tables of distinct values in both halves, so that a half taken from the wrong side shows.
std::pair<torch::Tensor, torch::Tensor> tables(std::vector<std::int64_t> shape) {
  return {torch::randn(shape), torch::randn(shape)};
}

}  // namespace

TEST_CASE("apply_rotary gives transformers' rotation and its gradient") {
  torch::manual_seed(7);
  const std::int64_t batch = 2, seq = 5, heads = 3, dim = 8;
  for (const bool per_row : {false, true}) {
    INFO("per-row tables " << per_row);
    const auto [cos, sin] = per_row ? tables({batch, 1, seq, dim}) : tables({seq, dim});
    const auto base = torch::randn({batch, seq, heads, dim}).requires_grad_(true);
    const auto x = base.transpose(1, 2);  // (B, heads, T, D), as attention holds it
    const auto g = torch::randn({batch, heads, seq, dim});
    const auto out = shardkit::nn::apply_rotary(x, cos, sin);
    out.backward(g);

    const auto x64 = x.detach().to(torch::kFloat64).requires_grad_(true);
    const auto want = formula(x64, cos.to(torch::kFloat64), sin.to(torch::kFloat64));
    want.backward(g.to(torch::kFloat64));
    CHECK(torch::allclose(out.to(torch::kFloat64), want, 1e-5, 1e-6));
    CHECK(torch::allclose(base.grad().transpose(1, 2).to(torch::kFloat64), x64.grad(), 1e-5, 1e-6));
  }
}

TEST_CASE("apply_rotary with tables that require gradients differentiates them too") {
  torch::manual_seed(8);
  const auto x = torch::randn({1, 2, 4, 6}).requires_grad_(true);
  const auto cos = torch::randn({4, 6}).requires_grad_(true), sin = torch::randn({4, 6}).requires_grad_(true);
  shardkit::nn::apply_rotary(x, cos, sin).sum().backward();
  const auto c = cos.detach().clone().requires_grad_(true), s = sin.detach().clone().requires_grad_(true);
  formula(x.detach(), c, s).sum().backward();
  CHECK(torch::allclose(cos.grad(), c.grad()));
  CHECK(torch::allclose(sin.grad(), s.grad()));
}
