// shardkit::nn::MultiheadAttention against LibTorch's torch::nn::MultiheadAttention: the same
// parameter names and initial values for a seed, the same outputs and gradients.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/error.hpp>
#include <shardkit/nn/attention.hpp>

namespace {

struct Pair {
  shardkit::nn::MultiheadAttention ours{nullptr};
  torch::nn::MultiheadAttention theirs{nullptr};
};

Pair make_pair(std::int64_t dim, std::int64_t heads) {
  torch::manual_seed(11);
  Pair p;
  p.ours = shardkit::nn::MultiheadAttention(dim, heads, 0.0);
  torch::manual_seed(11);
  p.theirs = torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(dim, heads));
  return p;
}

}  // namespace

TEST_CASE("attention has torch's parameter names and, for a seed, its initial values", "[nn][attention]") {
  auto p = make_pair(32, 4);
  const auto ours = p.ours->named_parameters();
  const auto theirs = p.theirs->named_parameters();
  REQUIRE(ours.keys() == theirs.keys());
  for (const auto& name : ours.keys()) {
    INFO(name);
    CHECK(torch::equal(ours[name], theirs[name]));
  }
}

TEST_CASE("attention outputs and gradients equal torch's", "[nn][attention]") {
  auto p = make_pair(32, 4);
  torch::manual_seed(5);
  const auto x = torch::randn({7, 3, 32});
  const auto pos = torch::randn({7, 1, 32});
  const auto memory = torch::randn({5, 3, 32});
  auto padding = torch::zeros({3, 7}, torch::kBool);
  padding.index_put_({1, torch::indexing::Slice(4)}, true);
  const auto qk = x + pos;
  SECTION("self-attention, query = key != value, with key padding") {
    const auto ours = p.ours(qk, qk, x, padding);
    const auto theirs = std::get<0>(p.theirs(qk, qk, x, padding));
    CHECK(torch::allclose(ours, theirs, 1e-5, 1e-6));
    ours.pow(2).sum().backward();
    std::get<0>(p.theirs(qk, qk, x, padding)).pow(2).sum().backward();
    CHECK(torch::allclose(p.ours->in_proj_weight.grad(), p.theirs->in_proj_weight.grad(), 1e-4, 1e-5));
    CHECK(torch::allclose(p.ours->out_proj->weight.grad(), p.theirs->out_proj->weight.grad(), 1e-4, 1e-5));
  }
  SECTION("one tensor for query, key and value") {
    CHECK(torch::allclose(p.ours(x, x, x), std::get<0>(p.theirs(x, x, x)), 1e-5, 1e-6));
  }
  SECTION("cross-attention, key = value") {
    CHECK(torch::allclose(p.ours(qk, memory, memory), std::get<0>(p.theirs(qk, memory, memory)), 1e-5, 1e-6));
  }
}

TEST_CASE("attention dropout acts in training only, and bad sizes are refused", "[nn][attention]") {
  torch::manual_seed(2);
  shardkit::nn::MultiheadAttention attention(16, 2, 0.5);
  const auto x = torch::randn({6, 2, 16});
  attention->eval();
  const auto a = attention(x, x, x);
  CHECK(torch::equal(a, attention(x, x, x)));
  attention->train();
  CHECK_FALSE(torch::allclose(attention(x, x, x), a));
  CHECK_THROWS_WITH(shardkit::nn::MultiheadAttention(30, 4), Catch::Contains("multiple of num_heads"));
}
