// Activation checkpointing: the same loss, gradients and random stream as without, fewer saved
// activations, and the choice of checkpointed blocks (full, selective, nested, none).
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/error.hpp>
#include <shardkit/nn/activation_checkpointing.hpp>
#include <shardkit/nn/block.hpp>
#include <shardkit/nn/dropout.hpp>

#include "../../../apps/shardkit-train/src/tensor_memory.hpp"

namespace {

namespace nn = shardkit::nn;

/// A residual MLP block with dropout (random), GELU (saves its input) and a wide hidden layer.
class MlpBlockImpl : public nn::Block {
 public:
  explicit MlpBlockImpl(int dim, int hidden = 256) : Block("MlpBlock") {
    up = register_module("up", torch::nn::Linear(dim, hidden));
    down = register_module("down", torch::nn::Linear(hidden, dim));
  }
  int calls = 0;
  torch::nn::Linear up{nullptr}, down{nullptr};

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x) override {
    ++calls;
    return x + down(nn::dropout(torch::gelu(up(x)), 0.3, is_training()));
  }
};
TORCH_MODULE(MlpBlock);

/// Two tensors in (hidden states, a mask that needs no gradient), two out (one an integer count).
class MaskedBlockImpl : public nn::ListBlock {
 public:
  explicit MaskedBlockImpl(int dim) : ListBlock("MaskedBlock") { proj = register_module("proj", torch::nn::Linear(dim, dim)); }
  int calls = 0;
  torch::nn::Linear proj{nullptr};

 protected:
  nn::TensorList forward_impl(const nn::TensorList& in) override {
    ++calls;
    auto y = torch::tanh(proj(in[0])) * in[1];
    y = nn::dropout(y, 0.2, is_training());
    return {y, in[1].sum().to(torch::kLong)};
  }
};

struct Net : torch::nn::Module {
  explicit Net(int dim = 16) {
    first = register_module("first", MlpBlock(dim));
    masked = register_module("masked", std::make_shared<MaskedBlockImpl>(dim));
    second = register_module("second", MlpBlock(dim));
    head = register_module("head", torch::nn::Linear(dim, 1));
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask) {
    auto h = first(x);
    auto out = masked->forward({h, mask});
    h = second(out[0]);
    return head(h).pow(2).mean() + out[1].to(torch::kFloat) * 0;
  }
  MlpBlock first{nullptr}, second{nullptr};
  std::shared_ptr<MaskedBlockImpl> masked;
  torch::nn::Linear head{nullptr};
};

struct StepResult {
  std::vector<double> losses;
  std::vector<torch::Tensor> grads;  // after the last step
  torch::Tensor input_grad;
  double next_random = 0;  // what the generator gives after the steps
};

/// Three forward/backward passes of the same net (same seed), checkpointed per `mode`.
StepResult run(nn::CheckpointingMode mode, std::int64_t every = 2, bool freeze_first = false) {
  torch::manual_seed(11);
  Net net;
  nn::checkpoint_blocks(net, {"MlpBlock", "MaskedBlock"}, mode, every);
  if (freeze_first)
    for (auto& p : net.first->parameters()) p.requires_grad_(false);
  StepResult r;
  for (int step = 0; step < 3; ++step) {
    for (auto& p : net.parameters()) p.mutable_grad() = torch::Tensor();
    auto x = torch::randn({8, 16}).requires_grad_(true);
    const auto mask = (torch::rand({8, 16}) > 0.1).to(torch::kFloat);
    auto loss = net.forward(x, mask);
    loss.backward();
    r.losses.push_back(loss.item<double>());
    r.input_grad = x.grad().clone();
  }
  for (const auto& p : net.parameters()) r.grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  r.next_random = torch::rand({1}).item<double>();
  return r;
}

void require_identical(const StepResult& got, const StepResult& want) {
  REQUIRE(got.losses.size() == want.losses.size());
  for (std::size_t i = 0; i < got.losses.size(); ++i) CHECK(got.losses[i] == want.losses[i]);
  REQUIRE(got.grads.size() == want.grads.size());
  for (std::size_t i = 0; i < got.grads.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(got.grads[i].defined() == want.grads[i].defined());
    if (want.grads[i].defined()) CHECK(torch::equal(got.grads[i], want.grads[i]));
  }
  CHECK(torch::equal(got.input_grad, want.input_grad));
  CHECK(got.next_random == want.next_random);  // the recompute left the generator where it was
}

}  // namespace

TEST_CASE("checkpointed blocks give the same losses, gradients and random stream, dropout on", "[nn][checkpoint]") {
  const auto plain = run(nn::CheckpointingMode::None);
  // Dropout is on: without the restored generator state the recompute would draw other masks.
  REQUIRE(plain.losses[0] != plain.losses[1]);
  SECTION("full") { require_identical(run(nn::CheckpointingMode::Full), plain); }
  SECTION("selective, every 2nd") { require_identical(run(nn::CheckpointingMode::Selective, 2), plain); }
  SECTION("a frozen block: gradients still reach its input") {
    require_identical(run(nn::CheckpointingMode::Full, 1, true), run(nn::CheckpointingMode::None, 1, true));
  }
}

TEST_CASE("a checkpointed block runs forward_impl again in backward only, and not at all without gradients",
          "[nn][checkpoint]") {
  torch::manual_seed(1);
  Net net;
  nn::checkpoint_blocks(net, {"MlpBlock"}, nn::CheckpointingMode::Full, 1);
  CHECK(net.first->activation_checkpointing());
  CHECK_FALSE(net.masked->activation_checkpointing());
  const auto x = torch::randn({4, 16});
  const auto mask = torch::ones({4, 16});
  auto loss = net.forward(x, mask);
  CHECK(net.first->calls == 1);
  loss.backward();
  CHECK(net.first->calls == 2);
  CHECK(net.masked->calls == 1);
  {
    torch::NoGradGuard no_grad;
    net.forward(x, mask);
  }
  CHECK(net.first->calls == 3);
}

TEST_CASE("hooks run once around a checkpointed block, not in the recompute", "[nn][checkpoint]") {
  MlpBlock block(4);
  block->set_activation_checkpointing(true);
  int pre = 0, post = 0;
  auto hooks = std::make_shared<nn::BlockHooks>();
  hooks->pre_forward = [&](nn::BlockBase&, nn::TensorList&) { ++pre; };
  hooks->post_forward = [&](nn::BlockBase&, nn::TensorList& out) {
    ++post;
    out[0] = out[0] * 2;  // hooks still replace outputs
  };
  block->set_hooks(hooks);
  torch::manual_seed(2);
  const auto x = torch::randn({3, 4}, torch::requires_grad());
  block(x).sum().backward();
  CHECK(pre == 1);
  CHECK(post == 1);
  CHECK(block->calls == 2);
  REQUIRE(block->up->weight.grad().defined());
}

TEST_CASE("a checkpointed block keeps only its inputs through forward", "[nn][checkpoint]") {
  shardkit::train::install_cpu_tensor_counter();
  REQUIRE(shardkit::train::cpu_tensor_counter_installed());
  const auto activations = [](bool checkpointed) {
    torch::manual_seed(5);
    torch::nn::Sequential seq;
    for (int i = 0; i < 4; ++i) seq->push_back(MlpBlock(64, 1024));
    nn::checkpoint_blocks(*seq, {"MlpBlock"}, checkpointed ? nn::CheckpointingMode::Full : nn::CheckpointingMode::None, 1);
    const auto x = torch::randn({128, 64}, torch::requires_grad());
    const auto before = shardkit::train::cpu_tensor_bytes();
    auto y = seq->forward(x);
    const auto held = shardkit::train::cpu_tensor_bytes() - before;  // what backward will need
    y.sum().backward();
    return held;
  };
  const auto plain = activations(false), checkpointed = activations(true);
  INFO("activations held after forward: " << plain << " bytes plain, " << checkpointed << " checkpointed");
  // Plain: per block the [128, 1024] hidden layer several times over (up's output, GELU's,
  // dropout's); checkpointed: per block its [128, 64] output.
  CHECK(plain > 4 * 2 * 128 * 1024 * 4);
  CHECK(checkpointed < 4 * 2 * 128 * 64 * 4);
}

TEST_CASE("checkpoint_blocks chooses the outermost wrap blocks: all, every k-th, or none", "[nn][checkpoint]") {
  torch::nn::Sequential seq;
  for (int i = 0; i < 5; ++i) seq->push_back(MlpBlock(4));
  using Names = std::vector<std::string>;
  CHECK(nn::checkpoint_blocks(*seq, {"MlpBlock"}, nn::CheckpointingMode::Full, 3) == Names{"0", "1", "2", "3", "4"});
  // torchtitan's count: the k-th, 2k-th, ... block
  CHECK(nn::checkpoint_blocks(*seq, {"MlpBlock"}, nn::CheckpointingMode::Selective, 2) == Names{"1", "3"});
  CHECK_FALSE(seq[0]->as<MlpBlockImpl>()->activation_checkpointing());  // turned off again
  CHECK(seq[1]->as<MlpBlockImpl>()->activation_checkpointing());
  CHECK(nn::checkpoint_blocks(*seq, {"MlpBlock"}, nn::CheckpointingMode::Selective, 1).size() == 5);
  CHECK(nn::checkpoint_blocks(*seq, {"MlpBlock"}, nn::CheckpointingMode::None, 1).empty());
  for (const auto& b : nn::find_blocks(*seq)) CHECK_FALSE(b.block->activation_checkpointing());
  CHECK(nn::checkpoint_blocks(*seq, {"Other"}, nn::CheckpointingMode::Full, 1).empty());
  CHECK(nn::checkpoint_blocks(*seq, {}, nn::CheckpointingMode::Full, 1).empty());
  CHECK_THROWS_AS(nn::checkpoint_blocks(*seq, {"MlpBlock"}, nn::CheckpointingMode::Selective, 0), shardkit::ConfigError);

  // A wrap block inside another: only the outer one is checkpointed.
  struct Outer : nn::Block {
    Outer() : Block("Outer") { inner = register_module("inner", MlpBlock(4)); }
    torch::Tensor forward_impl(const torch::Tensor& x) override { return inner(x); }
    MlpBlock inner{nullptr};
  };
  torch::nn::Sequential nested;
  nested->push_back(std::make_shared<Outer>());
  CHECK(nn::checkpoint_blocks(*nested, {"Outer", "MlpBlock"}, nn::CheckpointingMode::Full, 1) == Names{"0"});
}

TEST_CASE("the mode's names", "[nn][checkpoint]") {
  CHECK(nn::parse_checkpointing_mode("full", "--m") == nn::CheckpointingMode::Full);
  CHECK(nn::parse_checkpointing_mode("selective", "--m") == nn::CheckpointingMode::Selective);
  CHECK(nn::parse_checkpointing_mode("none", "--m") == nn::CheckpointingMode::None);
  CHECK_THROWS_WITH(nn::parse_checkpointing_mode("ful", "--m"), Catch::Contains("--m=ful: expected none, full"));
}

TEST_CASE("a checkpointed ListBlock takes undefined inputs (an absent mask)", "[nn][checkpoint]") {
  struct Optional : nn::ListBlock {
    Optional() : ListBlock("Optional") { w = register_parameter("w", torch::full({3}, 2.0)); }
    nn::TensorList forward_impl(const nn::TensorList& in) override {
      return {in[1].defined() ? in[0] * w + in[1] : in[0] * w, in[1]};
    }
    torch::Tensor w;
  };
  auto block = std::make_shared<Optional>();
  block->set_activation_checkpointing(true);
  const auto x = torch::ones({3}, torch::requires_grad());
  auto out = block->forward({x, torch::Tensor()});
  REQUIRE(out.size() == 2);
  CHECK_FALSE(out[1].defined());
  out[0].sum().backward();
  CHECK(torch::equal(x.grad(), torch::full({3}, 2.0)));
  CHECK(torch::equal(block->w.grad(), torch::ones({3})));
}
