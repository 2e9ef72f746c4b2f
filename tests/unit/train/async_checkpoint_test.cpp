// The parts of asynchronous checkpoints: the host copy of the state (a snapshot that training
// can no longer change, buffers reused between saves) and the background writer (one job at a
// time, its failure reported once).
#include <torch/torch.h>

#include "../../../apps/shardkit-train/src/background_writer.hpp"
#include "../../../apps/shardkit-train/src/host_staging.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

using namespace shardkit;
using namespace shardkit::train;

TEST_CASE("the host copy of the state is a snapshot: later changes to the live tensors do not reach it", "[train][checkpoint]") {
  ShardedState live;
  auto weight = torch::arange(12, torch::kFloat32).reshape({3, 4});
  auto flat = torch::arange(10, torch::kFloat64);
  live.add("model.w", weight, ShardLayout::whole({3, 4}), Replicas::none());
  // A ZeRO-style flat range: elements [2, 9) of a 2 x 5 tensor, three boxes over one local tensor.
  live.add("optimizer.state.w.exp_avg", flat.narrow(0, 2, 7), ShardLayout::flat_range({2, 5}, 2, 9), Replicas::none());
  live.objects["optimizer.param_groups.0.lr"] = 0.5;
  live.model_is_adapter = true;

  HostStaging staging;
  auto copy = staging.copy(live);
  weight.add_(100);
  flat.mul_(-1);
  CHECK(copy.tensors.at("model.w").chunks.at(0).data.equal(torch::arange(12, torch::kFloat32).reshape({3, 4})));
  const auto& chunks = copy.tensors.at("optimizer.state.w.exp_avg").chunks;
  REQUIRE(chunks.size() == live.tensors.at("optimizer.state.w.exp_avg").chunks.size());
  std::vector<double> seen;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].box == live.tensors.at("optimizer.state.w.exp_avg").chunks[i].box);
    for (const auto v : chunks[i].data.flatten().contiguous().to(torch::kFloat64).unbind()) seen.push_back(v.item<double>());
  }
  CHECK(seen == std::vector<double>{2, 3, 4, 5, 6, 7, 8});
  CHECK(std::get<double>(copy.objects.at("optimizer.param_groups.0.lr")) == 0.5);
  CHECK(copy.model_is_adapter);
  CHECK(staging.bytes() == 12 * 4 + 7 * 8);

  // The next save reuses the buffers (same shapes) and holds the new values.
  const auto buffer = copy.tensors.at("model.w").chunks.at(0).data.data_ptr();
  copy = {};
  auto again = staging.copy(live);
  CHECK(again.tensors.at("model.w").chunks.at(0).data.data_ptr() == buffer);
  CHECK(again.tensors.at("model.w").chunks.at(0).data.equal(weight));
}

TEST_CASE("the host copy skips the data of replicas a save does not write", "[train][checkpoint]") {
  ShardedState live;
  auto weight = torch::ones({4, 4});
  live.add("model.w", weight, ShardLayout::whole({4, 4}), Replicas::among(1, 2));  // rank 1 of 2 ddp copies
  HostStaging staging;
  const auto copy = staging.copy(live);
  const auto& chunk = copy.tensors.at("model.w").chunks.at(0);
  CHECK(chunk.data.sizes() == weight.sizes());
  CHECK(chunk.data.data_ptr() != weight.data_ptr());
  CHECK(copy.tensors.at("model.w").replicas == Replicas::among(1, 2));
  CHECK(staging.bytes() == 0);
}

TEST_CASE("the background writer runs one job at a time and reports each failure once", "[train][checkpoint]") {
  BackgroundWriter writer;
  CHECK_FALSE(writer.busy());
  CHECK(writer.wait().empty());

  std::atomic<int> runs{0};
  writer.start([&] { ++runs; });
  CHECK(writer.busy());
  CHECK(writer.wait().empty());
  CHECK_FALSE(writer.busy());
  CHECK(runs == 1);

  writer.start([] { throw std::runtime_error("disk full at /x/y\nsecond line"); });
  const auto failure = writer.wait();
  CHECK(failure.find("disk full at /x/y") != std::string::npos);
  CHECK(failure.find('\n') == std::string::npos);
  CHECK(writer.wait().empty());  // reported once

  // start() waits for the job before it: the two never overlap.
  std::atomic<bool> first_done{false}, overlapped{false};
  writer.start([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    first_done = true;
  });
  writer.start([&] { overlapped = !first_done.load(); });
  CHECK(writer.wait().empty());
  CHECK_FALSE(overlapped);
}
