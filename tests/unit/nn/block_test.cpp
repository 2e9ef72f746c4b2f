// Block hooks run however the block is called: directly, through a module holder, inside Sequential.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <shardkit/error.hpp>
#include <shardkit/nn/block.hpp>

namespace {

class ScaleBlockImpl : public shardkit::nn::Block {
 public:
  ScaleBlockImpl() : Block("ScaleBlock") {
    weight = register_parameter("weight", torch::full({3}, 2.0));
  }
  int calls = 0;

 protected:
  torch::Tensor forward_impl(const torch::Tensor& x) override {
    ++calls;
    return x * weight;
  }

 private:
  torch::Tensor weight;
};
TORCH_MODULE(ScaleBlock);

class PairBlockImpl : public shardkit::nn::ListBlock {
 public:
  PairBlockImpl() : ListBlock("PairBlock") {}

 protected:
  shardkit::nn::TensorList forward_impl(const shardkit::nn::TensorList& in) override {
    return {in[0] + in[1], in[0] - in[1]};
  }
};

struct Recorder {
  std::vector<std::string> events;
  std::shared_ptr<shardkit::nn::BlockHooks> hooks() {
    auto h = std::make_shared<shardkit::nn::BlockHooks>();
    h->pre_forward = [this](shardkit::nn::BlockBase& b, shardkit::nn::TensorList& in) {
      events.push_back("pre " + b.name() + " " + std::to_string(in.size()));
      in[0] = in[0] + 1;  // hooks may replace inputs
    };
    h->post_forward = [this](shardkit::nn::BlockBase& b, shardkit::nn::TensorList& out) {
      events.push_back("post " + b.name() + " " + std::to_string(out.size()));
      out[0] = out[0] * 10;  // and outputs
    };
    return h;
  }
};

}  // namespace

TEST_CASE("a Block without hooks just runs forward_impl", "[nn][block]") {
  ScaleBlock block;
  const auto y = block(torch::ones({3}));
  CHECK(torch::equal(y, torch::full({3}, 2.0)));
  CHECK(block->calls == 1);
  CHECK_FALSE(block->has_hooks());
}

TEST_CASE("hooks run when a Block is called through its module holder", "[nn][block]") {
  ScaleBlock block;
  Recorder rec;
  block->set_hooks(rec.hooks());
  const auto y = block(torch::ones({3}));  // ModuleHolder::operator() -> forward
  // (1 + 1) * 2 * 10
  CHECK(torch::equal(y, torch::full({3}, 40.0)));
  REQUIRE(rec.events == std::vector<std::string>{"pre ScaleBlock 1", "post ScaleBlock 1"});
}

TEST_CASE("hooks run when a Block sits inside Sequential", "[nn][block]") {
  torch::nn::Sequential seq(ScaleBlock(), torch::nn::Functional(torch::relu), ScaleBlock());
  Recorder rec;
  const auto blocks = shardkit::nn::find_blocks(*seq);
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].name == "0");
  CHECK(blocks[1].name == "2");
  for (const auto& b : blocks) b.block->set_hooks(rec.hooks());
  const auto y = seq->forward(torch::ones({3}));
  // first: ((1+1)*2)*10 = 40; relu; second: ((40+1)*2)*10 = 820
  CHECK(torch::equal(y, torch::full({3}, 820.0)));
  CHECK(rec.events.size() == 4);
}

TEST_CASE("hooks see gradients flow through replaced tensors", "[nn][block]") {
  ScaleBlock block;
  Recorder rec;
  block->set_hooks(rec.hooks());
  block(torch::ones({3})).sum().backward();
  const auto grad = block->named_parameters()["weight"].grad();
  // d/dw sum(10 * (x+1) * w) = 10 * (x+1) = 20
  CHECK(torch::equal(grad, torch::full({3}, 20.0)));
}

TEST_CASE("ListBlock runs hooks over flattened lists; removing hooks restores plain calls", "[nn][block]") {
  auto block = std::make_shared<PairBlockImpl>();
  Recorder rec;
  block->set_hooks(rec.hooks());
  auto out = block->forward({torch::ones({2}), torch::ones({2})});
  REQUIRE(out.size() == 2);
  CHECK(torch::equal(out[0], torch::full({2}, 30.0)));  // ((1+1)+1)*10
  CHECK(torch::equal(out[1], torch::full({2}, 1.0)));   // (1+1)-1
  CHECK(rec.events == std::vector<std::string>{"pre PairBlock 2", "post PairBlock 2"});
  block->set_hooks(nullptr);
  out = block->forward({torch::ones({2}), torch::ones({2})});
  CHECK(torch::equal(out[0], torch::full({2}, 2.0)));
}

TEST_CASE("a hook that changes the number of tensors is an error", "[nn][block]") {
  ScaleBlock block;
  auto h = std::make_shared<shardkit::nn::BlockHooks>();
  h->pre_forward = [](shardkit::nn::BlockBase&, shardkit::nn::TensorList& in) { in.push_back(in[0]); };
  block->set_hooks(h);
  CHECK_THROWS_AS(block(torch::ones({3})), shardkit::RuntimeError);
}

TEST_CASE("find_blocks filters by class name", "[nn][block]") {
  torch::nn::Sequential seq{ScaleBlock(), ScaleBlock()};
  CHECK(shardkit::nn::find_blocks(*seq, {"ScaleBlock"}).size() == 2);
  CHECK(shardkit::nn::find_blocks(*seq, {"Other"}).empty());
}
