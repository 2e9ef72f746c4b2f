// rms_norm against transformers' LlamaRMSNorm formula in float64: output and both gradients on a
// 4-d input (Qwen3's per-head norm) and a 2-d one, the input's gradient alone under a frozen
// weight (LoRA) on a non-contiguous input, and bf16 through the formula's own casts.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/nn/rms_norm.hpp>

namespace {

using shardkit::nn::rms_norm;

constexpr double kEps = 1e-6;

/// transformers' formula, in float64, on copies of x and weight; returns out, x's and weight's gradients.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> reference(const torch::Tensor& x, const torch::Tensor& weight,
                                                                  const torch::Tensor& grad_out) {
  const auto h = x.detach().to(torch::kFloat64).requires_grad_(true);
  const auto w = weight.detach().to(torch::kFloat64).requires_grad_(true);
  const auto out = w * (h * torch::rsqrt(h.pow(2).mean(-1, true) + kEps));
  out.backward(grad_out.to(torch::kFloat64));
  return {out.detach(), h.grad(), w.grad()};
}

}  // namespace

TEST_CASE("rms_norm gives transformers' RMSNorm and its gradients in float32") {
  torch::manual_seed(3);
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 5, 3, 8}, {7, 24}}) {
    INFO("input shape rank " << shape.size());
    const auto x = (torch::randn(shape) * 3).requires_grad_(true);
    const auto w = torch::rand({shape.back()}).add_(0.5).requires_grad_(true);
    const auto g = torch::randn(shape);
    const auto [want, want_x, want_w] = reference(x, w, g);
    const auto out = rms_norm(x, w, kEps);
    CHECK(out.scalar_type() == torch::kFloat32);
    CHECK(torch::allclose(out.to(torch::kFloat64), want, 1e-5, 1e-6));
    out.backward(g);
    CHECK(torch::allclose(x.grad().to(torch::kFloat64), want_x, 1e-4, 1e-5));
    CHECK(torch::allclose(w.grad().to(torch::kFloat64), want_w, 1e-4, 1e-5));
  }
}

TEST_CASE("rms_norm with a frozen weight (LoRA) gives the input's gradient, on a non-contiguous input") {
  torch::manual_seed(4);
  const auto base = torch::randn({3, 6, 4, 16}).requires_grad_(true);
  const auto x = base.transpose(1, 2);  // (B, heads, T, D) as attention holds it
  REQUIRE_FALSE(x.is_contiguous());
  const auto frozen = torch::rand({16}).add_(0.5);  // LoRA freezes the norms
  const auto g = torch::randn(x.sizes());
  const auto [want, want_x, want_w] = reference(x, frozen, g);
  const auto out = rms_norm(x, frozen, kEps);
  CHECK(torch::allclose(out.to(torch::kFloat64), want, 1e-5, 1e-6));
  out.backward(g);
  CHECK(torch::allclose(base.grad().transpose(1, 2).to(torch::kFloat64), want_x, 1e-4, 1e-5));
}

TEST_CASE("rms_norm in bf16 normalises in float32 and casts back before the weight, as transformers") {
  torch::manual_seed(5);
  const auto x = torch::randn({4, 32}).to(torch::kBFloat16);
  const auto w = torch::rand({32}).add_(0.5).to(torch::kBFloat16);
  const auto out = rms_norm(x, w, kEps);
  CHECK(out.scalar_type() == torch::kBFloat16);
  const auto h = x.to(torch::kFloat32);
  const auto want = w * (h * torch::rsqrt(h.pow(2).mean(-1, true) + kEps)).to(torch::kBFloat16);
  CHECK(torch::equal(out, want));
}
