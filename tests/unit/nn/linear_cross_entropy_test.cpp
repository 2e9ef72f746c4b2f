// linear_cross_entropy against cross_entropy(hidden @ weight^T, reduction sum): loss and both
// gradients, in one chunk and in many, with ignored rows, only the gradients asked for, none
// without grad mode, and a bf16 weight whose gradient sums its chunks in float32.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/nn/linear_cross_entropy.hpp>

namespace {

using shardkit::nn::linear_cross_entropy;
using shardkit::nn::linear_cross_entropy_applies;

constexpr std::int64_t kIgnore = -100;

struct Case {
  torch::Tensor hidden, weight, targets;
};

Case make_case(torch::ScalarType dtype = torch::kFloat32) {
  torch::manual_seed(11);
  Case c;
  c.hidden = (torch::randn({37, 16}) * 2).to(dtype);
  c.weight = (torch::randn({50, 16}) * 0.5).to(dtype);
  c.targets = torch::randint(0, 50, {37}, torch::kLong);
  c.targets.index_put_({torch::tensor({0, 5, 6, 36})}, kIgnore);  // prompts without labels, padding
  return c;
}

/// The unfused reference: loss and the gradients of hidden and weight, in float64.
std::tuple<double, torch::Tensor, torch::Tensor> reference(const Case& c) {
  const auto h = c.hidden.to(torch::kFloat64).detach().requires_grad_(true);
  const auto w = c.weight.to(torch::kFloat64).detach().requires_grad_(true);
  const auto loss = torch::nn::functional::cross_entropy(
      torch::mm(h, w.t()), c.targets,
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnore).reduction(torch::kSum));
  (loss * 0.25).backward();
  return {loss.item<double>(), h.grad(), w.grad()};
}

}  // namespace

TEST_CASE("linear_cross_entropy gives cross_entropy's loss and gradients in one chunk and in many") {
  const auto c = make_case();
  const auto [want_loss, want_h, want_w] = reference(c);
  for (const std::int64_t rows : {0, 1, 8, 36, 37}) {
    INFO("max_chunk_rows " << rows);
    const auto h = c.hidden.clone().requires_grad_(true);
    const auto w = c.weight.clone().requires_grad_(true);
    const auto loss = linear_cross_entropy(h, w, c.targets, kIgnore, rows);
    CHECK(loss.scalar_type() == torch::kFloat32);
    CHECK(loss.item<double>() == Approx(want_loss).epsilon(1e-5));
    (loss * 0.25).backward();  // backward scales the stored gradients by the loss's own gradient
    CHECK(torch::allclose(h.grad().to(torch::kFloat64), want_h, 1e-5, 1e-6));
    CHECK(torch::allclose(w.grad().to(torch::kFloat64), want_w, 1e-5, 1e-6));
    // Ignored rows get no gradient.
    CHECK(h.grad()[5].abs().max().item<double>() == 0.0);
  }
}

TEST_CASE("linear_cross_entropy computes only the gradients asked for; without grad mode, only the loss") {
  const auto c = make_case();
  const auto [want_loss, want_h, want_w] = reference(c);
  const auto h = c.hidden.clone().requires_grad_(true);
  const auto frozen = c.weight.clone();  // LoRA's frozen output layer
  const auto loss = linear_cross_entropy(h, frozen, c.targets, kIgnore, 5);
  CHECK(loss.requires_grad());
  (loss * 0.25).backward();
  CHECK(torch::allclose(h.grad().to(torch::kFloat64), want_h, 1e-5, 1e-6));

  // Evaluation: tensors that require gradients, grad mode off.
  const auto w = c.weight.clone().requires_grad_(true);
  torch::NoGradGuard no_grad;
  const auto plain = linear_cross_entropy(c.hidden.clone().requires_grad_(true), w, c.targets, kIgnore, 5);
  CHECK_FALSE(plain.requires_grad());
  CHECK(plain.item<double>() == Approx(want_loss).epsilon(1e-5));
}

TEST_CASE("linear_cross_entropy in bf16 stays near the float64 reference, chunked or not") {
  const auto c = make_case(torch::kBFloat16);
  const auto [want_loss, want_h, want_w] = reference(c);  // of the same bf16 values
  for (const std::int64_t rows : {0, 4}) {
    INFO("max_chunk_rows " << rows);
    const auto h = c.hidden.clone().requires_grad_(true);
    const auto w = c.weight.clone().requires_grad_(true);
    const auto loss = linear_cross_entropy(h, w, c.targets, kIgnore, rows);
    CHECK(loss.item<double>() == Approx(want_loss).epsilon(2e-2));
    (loss * 0.25).backward();
    CHECK(h.grad().scalar_type() == torch::kBFloat16);
    CHECK(w.grad().scalar_type() == torch::kBFloat16);
    // bf16 has 8 bits of mantissa: each gradient within a few per cent of its scale.
    const double scale_w = want_w.abs().max().item<double>();
    CHECK((w.grad().to(torch::kFloat64) - want_w).abs().max().item<double>() < 2e-2 * scale_w);
    const double scale_h = want_h.abs().max().item<double>();
    CHECK((h.grad().to(torch::kFloat64) - want_h).abs().max().item<double>() < 2e-2 * scale_h);
  }
}

TEST_CASE("linear_cross_entropy_applies only where the unfused path computes the same thing") {
  const auto c = make_case();
  CHECK(linear_cross_entropy_applies(c.hidden, c.weight));
  // A second backward through the same loss is refused (the stored gradients were handed over).
  const auto h = c.hidden.clone().requires_grad_(true);
  const auto loss = linear_cross_entropy(h, c.weight, c.targets, kIgnore);
  loss.backward({}, /*retain_graph=*/true);
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("backward through the same loss twice"));
  CHECK_FALSE(linear_cross_entropy_applies(c.hidden, c.weight.to(torch::kBFloat16)));
  CHECK_FALSE(linear_cross_entropy_applies(c.hidden.unsqueeze(0), c.weight));
}
