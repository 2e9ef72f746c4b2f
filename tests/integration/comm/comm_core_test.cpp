// The transport interface's core parts: names, store keys, CommInit from the runtime, local groups.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <cstdlib>

#include <shardkit/comm.hpp>
#include <shardkit/error.hpp>
#include <shardkit/runtime.hpp>

using namespace shardkit;

TEST_CASE("comm names and store keys", "[comm]") {
  CHECK(std::string(to_string(ReduceOp::Avg)) == "avg");
  CHECK(std::string(to_string(CommOp::ReduceScatter)) == "reduce_scatter");
  CHECK(std::string(to_string(Support::Emulated)) == "emulated");
  CHECK(store_keys::arrived(7) == "arrived/7");
  CHECK(std::string(store_keys::kFailure) == "shardkit/failure");
  auto done = completed_work();
  done->wait();
  done->wait();
}

TEST_CASE("CommInit copies the runtime and leaves the socket interface to the transport", "[comm]") {
  Runtime runtime;
  runtime.rank = 3;
  runtime.world_size = 8;
  runtime.master_addr = "10.1.2.3";
  runtime.master_port = 29600;
  runtime.use_agent_store = true;
  runtime.restart_count = 2;
  ::setenv("GLOO_SOCKET_IFNAME", "eth7", 1);
  const auto init = CommInit::from_runtime(runtime, 2.5);
  ::unsetenv("GLOO_SOCKET_IFNAME");
  CHECK(init.rank == 3);
  CHECK(init.world_size == 8);
  CHECK(init.master_addr == "10.1.2.3");
  CHECK(init.master_port == 29600);
  CHECK(init.use_agent_store);
  CHECK(init.restart_count == 2);
  CHECK(init.timeout == std::chrono::milliseconds(2500));
  CHECK(init.socket_ifname.empty());  // gloo reads GLOO_SOCKET_IFNAME itself
}

TEST_CASE("a local group is the identity and copies gathers", "[comm]") {
  auto group = make_local_group("solo");
  CHECK(group->name() == "solo");
  CHECK(group->rank() == 0);
  CHECK(group->size() == 1);
  auto t = torch::tensor({1.5f, -2.0f});
  group->all_reduce(t, ReduceOp::Avg)->wait();
  group->broadcast(t, 0, true)->wait();
  CHECK(torch::equal(t, torch::tensor({1.5f, -2.0f})));
  CHECK_THROWS_AS(group->broadcast(t, 1), RuntimeError);
  auto out = torch::zeros({1, 2});
  group->all_gather(out, t);
  CHECK(torch::equal(out[0], t));
  auto chunk = torch::zeros({2});
  group->reduce_scatter(chunk, t * 2, ReduceOp::Sum);
  CHECK(torch::equal(chunk, t * 2));
  auto wrong = torch::zeros({3});
  CHECK_THROWS_AS(group->all_gather(wrong, t), RuntimeError);
  group->barrier();
  CHECK(group->all_gather_bytes("abc") == std::vector<std::string>{"abc"});
  CHECK(group->supports(CommOp::AllReduce, torch::kBFloat16) == Support::Native);
}
