// The nccl comm plugin on one GPU: a real NCCL communicator of one rank, and its refusals.
#include <catch2/catch.hpp>

#include <torch/torch.h>

#include "shardkit/comm.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/runtime.hpp"
#include "test_support.hpp"

namespace {

struct OneRankComm {
  shardkit::Registry registry;
  shardkit::Runtime runtime;
  std::shared_ptr<shardkit::Comm> comm;

  explicit OneRankComm(const std::string& name, const std::string& device) {
    shardkit::PluginSearch search;
    search.dirs.push_back(SHARDKIT_PLUGIN_DIR);
    registry.discover(search);
    runtime.device = device;
    shardkit::PluginContext context;
    context.logger = shardkit::logger();
    context.runtime = &runtime;
    comm = registry.create_as<shardkit::Comm>("comm", name, context);
    auto init = shardkit::CommInit::from_runtime(runtime, 60);
    init.master_port = shardkit::test::free_port();
    comm->init(init);
  }
};

}  // namespace

TEST_CASE("nccl runs every collective on cuda:0 through a one-rank communicator", "[gpu][nccl]") {
  OneRankComm one("nccl", "cuda:0");
  auto world = one.comm->world();
  const auto cuda = torch::TensorOptions().device(torch::kCUDA, 0);
  for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf, torch::kLong}) {
    INFO(c10::toString(dtype));
    auto t = torch::arange(8, cuda.dtype(dtype));
    world->all_reduce(t, shardkit::ReduceOp::Sum);
    CHECK(torch::equal(t.cpu(), torch::arange(8).to(dtype)));
    world->all_reduce(t, shardkit::ReduceOp::Avg, /*async=*/true)->wait();
    CHECK(torch::equal(t.cpu(), torch::arange(8).to(dtype)));
    auto gathered = torch::zeros({8}, cuda.dtype(dtype));
    world->all_gather(gathered, t);
    CHECK(torch::equal(gathered.cpu(), torch::arange(8).to(dtype)));
    auto chunk = torch::zeros({8}, cuda.dtype(dtype));
    world->reduce_scatter(chunk, t, shardkit::ReduceOp::Sum);
    CHECK(torch::equal(chunk.cpu(), torch::arange(8).to(dtype)));
    auto buffer = t.clone();
    world->reduce_scatter_in_place(buffer, shardkit::ReduceOp::Sum);
    CHECK(torch::equal(buffer.cpu(), torch::arange(8).to(dtype)));
    world->broadcast(t, 0);
  }
  world->barrier();
  const auto bytes = world->all_gather_bytes("plan");
  REQUIRE(bytes.size() == 1);
  CHECK(bytes[0] == "plan");
}

TEST_CASE("nccl refuses CPU tensors naming gloo", "[gpu][nccl]") {
  OneRankComm one("nccl", "cuda:0");
  auto t = torch::ones({4});
  CHECK_THROWS_WITH(one.comm->world()->all_reduce(t, shardkit::ReduceOp::Sum),
                    Catch::Contains("nccl moves cuda tensors only") &&
                        Catch::Contains("use the gloo comm plugin for CPU tensors"));
}

TEST_CASE("CUDA tensors train: a linear fit on cuda:0 matches the CPU within fp32 rounding",
          "[gpu][train]") {
  torch::manual_seed(0);
  auto x = torch::randn({256, 16});
  auto w_true = torch::randn({16, 1});
  auto y = x.mm(w_true);
  auto fit = [&](torch::Device device) {
    auto w = torch::zeros({16, 1}, torch::TensorOptions().device(device).requires_grad(true));
    const auto xd = x.to(device), yd = y.to(device);
    for (int step = 0; step < 100; ++step) {
      auto loss = (xd.mm(w) - yd).pow(2).mean();
      loss.backward();
      torch::NoGradGuard no_grad;
      w.sub_(0.1 * w.grad());
      w.grad().zero_();
    }
    return w.detach().cpu();
  };
  CHECK(torch::allclose(fit(torch::kCUDA), fit(torch::kCPU), 1e-4, 1e-5));
}
