// shardkit::nn::dropout: torch::nn::Dropout's statistics and scaling, reproducible from the
// seed, independent of the thread count, and a gradient through the same mask.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <cmath>

#include <shardkit/nn/dropout.hpp>

namespace {

torch::Tensor kept(const torch::Tensor& out) { return out.ne(0); }

}  // namespace

TEST_CASE("dropout zeroes a fraction p and scales the rest by 1/(1-p)", "[nn][dropout]") {
  torch::manual_seed(1);
  const double p = GENERATE(0.1, 0.5, 0.9);
  INFO("p = " << p);
  const auto x = torch::rand({1000, 1000}) + 1.0;  // no zeros of its own
  const auto out = shardkit::nn::dropout(x, p, /*training=*/true);
  const double kept_fraction = kept(out).to(torch::kDouble).mean().item<double>();
  // 10^6 Bernoulli draws: the standard deviation of the fraction is below 5e-4.
  CHECK(std::abs(kept_fraction - (1.0 - p)) < 3e-3);
  const auto mask = kept(out);
  CHECK(torch::allclose(out.masked_select(mask), x.masked_select(mask) / (1.0 - p), 1e-6, 0));
  // Neighbouring elements are independent: P(both kept) = (1-p)^2.
  const auto flat = mask.flatten().to(torch::kDouble);
  const double both = (flat.slice(0, 1) * flat.slice(0, 0, -1)).mean().item<double>();
  CHECK(std::abs(both - (1.0 - p) * (1.0 - p)) < 3e-3);
}

TEST_CASE("dropout masks follow torch::manual_seed, differ between calls and ignore the thread count",
          "[nn][dropout]") {
  const auto x = torch::ones({257, 1031});
  torch::manual_seed(7);
  const auto first = shardkit::nn::dropout(x, 0.3, true);
  const auto second = shardkit::nn::dropout(x, 0.3, true);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(7);
  const auto again = shardkit::nn::dropout(x, 0.3, true);
  at::set_num_threads(threads);
  CHECK(torch::equal(first, again));
  // Two calls agree on an element with probability 0.3^2 + 0.7^2 = 0.58, not 1.
  const double agree = kept(first).eq(kept(second)).to(torch::kDouble).mean().item<double>();
  CHECK(std::abs(agree - 0.58) < 0.01);
}

TEST_CASE("dropout's gradient passes through the kept elements, scaled", "[nn][dropout]") {
  torch::manual_seed(3);
  const auto x = (torch::rand({64, 300}) + 1.0).set_requires_grad(true);
  const auto weights = torch::randn({64, 300});
  const auto out = shardkit::nn::dropout(x, 0.25, true);
  (out * weights).sum().backward();
  const auto expected = kept(out).to(torch::kFloat) * weights / 0.75;
  CHECK(torch::allclose(x.grad(), expected, 1e-6, 1e-7));
}

TEST_CASE("dropout is the identity in eval mode or at p = 0, and takes bfloat16 and strided input",
          "[nn][dropout]") {
  const auto x = torch::randn({8, 16});
  shardkit::nn::Dropout module(0.5);
  module->eval();
  CHECK(module(x).is_same(x));
  CHECK(shardkit::nn::dropout(x, 0.0, true).is_same(x));
  module->train();
  const auto strided = torch::rand({100, 200}).t() + 1.0;
  const auto out = module(strided);
  CHECK(out.sizes() == strided.sizes());
  CHECK(torch::allclose(out.masked_select(kept(out)), strided.masked_select(kept(out)) * 2.0));
  const auto half = shardkit::nn::dropout(torch::ones({1000}, torch::kBFloat16), 0.5, true);
  CHECK(half.scalar_type() == torch::kBFloat16);
  const auto values = std::get<0>(at::_unique(half.to(torch::kFloat)));
  CHECK(values.numel() == 2);
  CHECK(values.max().item<float>() == 2.0f);
  CHECK_THROWS_WITH(shardkit::nn::dropout(x, 1.5, true), Catch::Contains("between 0 and 1"));
}
