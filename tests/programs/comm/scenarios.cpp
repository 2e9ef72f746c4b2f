// comm_worker's scenarios: overlap, bytes, groups and the store; the failure scenarios; host_store.
#include "scenarios.hpp"

#include <cstdlib>
#include <iostream>
#include <thread>

#include <torch/torch.h>

#include "checks.hpp"

namespace comm_worker {
namespace {

using shardkit::CommGroup;
using shardkit::ReduceOp;
using Clock = std::chrono::steady_clock;

std::string at(const CommGroup& g, const std::string& what) {
  return "rank " + std::to_string(g.rank()) + " of group '" + g.name() + "': " + what;
}

void check_overlap(CommGroup& g) {
  const int n = g.size(), r = g.rank();
  std::vector<torch::Tensor> tensors;
  std::vector<shardkit::WorkHandle> works;
  for (int k = 0; k < 8; ++k) {
    tensors.push_back(torch::full({100'000}, static_cast<float>((r + 1) * (k + 1))));
    works.push_back(g.all_reduce(tensors.back(), ReduceOp::Sum, /*async=*/true));
  }
  // Emulated ops in flight at the same time: their post-processing happens in wait().
  auto avg = torch::full({1000}, 2.0 * (r + 1), torch::kBFloat16);
  auto avg_work = g.all_reduce(avg, ReduceOp::Avg, true);
  auto gathered = torch::zeros({n, 10}, torch::kLong);
  auto gather_work = g.all_gather(gathered, torch::full({10}, r, torch::kLong), true);
  auto chunk = torch::zeros({7});
  auto scatter_work = g.reduce_scatter(chunk, torch::ones({n * 7}), ReduceOp::Sum, true);
  scatter_work->wait();
  gather_work->wait();
  avg_work->wait();
  for (int k = 7; k >= 0; --k) {
    works[k]->wait();
    expect_equal(tensors[k], torch::full({100'000}, static_cast<float>((k + 1) * n * (n + 1) / 2)),
                 at(g, "async all_reduce #" + std::to_string(k)));
  }
  works[0]->wait();  // waiting twice is harmless
  expect_equal(avg, torch::full({1000}, n + 1.0), at(g, "async bfloat16 avg"));
  for (int q = 0; q < n; ++q)
    expect_equal(gathered[q], torch::full({10}, q), at(g, "async all_gather"));
  expect_equal(chunk, torch::full({7}, static_cast<float>(n)), at(g, "async reduce_scatter"));
}

void check_bytes(CommGroup& g) {
  auto mine = [](int q) {
    return q == 0 ? std::string() : std::string(q * 3, static_cast<char>('a' + q)) + '\0' + std::to_string(q);
  };
  const auto all = g.all_gather_bytes(mine(g.rank()));
  expect(static_cast<int>(all.size()) == g.size(), at(g, "all_gather_bytes returns one per member"));
  for (int q = 0; q < g.size(); ++q)
    expect(all[q] == mine(q), at(g, "all_gather_bytes entry " + std::to_string(q)));
  const auto empty = g.all_gather_bytes("");
  for (const auto& e : empty) expect(e.empty(), at(g, "all_gather_bytes of empty strings"));
}

void check_groups(shardkit::Comm& comm) {
  auto world = comm.world();
  const int n = world->size(), r = world->rank();
  std::vector<int> members;
  for (int q = r % 2; q < n; q += 2) members.push_back(q);
  const std::string tag = r % 2 == 0 ? "evens" : "odds";
  auto group = comm.new_group(members, tag);
  expect(group->size() == static_cast<int>(members.size()) && group->rank() == r / 2 &&
             group->name() == tag,
         at(*world, "new_group('" + tag + "') has this rank at position " + std::to_string(r / 2)));
  auto t = torch::full({3}, r + 1.0);
  group->all_reduce(t, ReduceOp::Sum);
  double sum = 0;
  for (const int q : members) sum += q + 1;
  expect_equal(t, torch::full({3}, sum), at(*group, "all_reduce inside the group"));
  check_bytes(*group);

  std::vector<int> everyone;
  for (int q = 0; q < n; ++q) everyone.push_back(q);
  auto all = comm.new_group(everyone, "everyone");
  expect(all->rank() == r && all->size() == n, at(*all, "a group of every rank"));
  check_every_dtype(*all);
  if (n > 1)
    expect_throws([&] { comm.new_group({(r + 1) % n}, "lonely"); }, "is not a member",
                  at(*world, "new_group without this rank"));
  expect_throws([&] { comm.new_group({r, r}, "twice"); }, "sorted and distinct",
                at(*world, "new_group with a repeated rank"));
}

void check_store(shardkit::Comm& comm) {
  auto world = comm.world();
  auto store = comm.store();
  const int n = world->size(), r = world->rank();
  for (int q = 0; q < n; ++q)
    expect(store->check({shardkit::store_keys::arrived(q)}), at(*world, "arrived key of rank " + std::to_string(q)));
  store->set("worker/" + std::to_string(r), "hello " + std::to_string(r));
  store->add("counter", r + 1);
  store->with_prefix("scoped")->set("key" + std::to_string(r), "v");
  world->barrier();
  for (int q = 0; q < n; ++q) {
    expect(store->get("worker/" + std::to_string(q)) == "hello " + std::to_string(q),
           at(*world, "store get of rank " + std::to_string(q) + "'s key"));
    expect(store->check({"scoped/key" + std::to_string(q)}), at(*world, "with_prefix joins with '/'"));
  }
  expect(store->add("counter", 0) == n * (n + 1) / 2, at(*world, "store add"));
  const auto start = Clock::now();
  expect_throws([&] { store->wait({"never/set"}, std::chrono::milliseconds(300)); }, "never/set",
                at(*world, "store wait for a missing key"));
  expect(Clock::now() - start < std::chrono::seconds(5), at(*world, "store wait is bounded"));
  world->barrier();  // nobody leaves (rank 0 may host the store) while others still read it
}

}  // namespace

void collectives(shardkit::Comm& comm) {
  auto world = comm.world();
  check_every_dtype(*world);
  check_overlap(*world);
  check_bytes(*world);
  world->barrier();
  check_groups(comm);
  check_store(comm);
}

void hang(shardkit::Comm& comm, const Args& args) {
  auto world = comm.world();
  auto warm = torch::ones({4});
  world->all_reduce(warm, ReduceOp::Sum);
  if (world->rank() == world->size() - 1) {
    // Alive but silent. Leave once the store's host (rank 0) is gone, or after a bound.
    const auto until = Clock::now() + std::chrono::duration<double>(args.timeout_s + 8);
    auto store = comm.store();
    try {
      while (Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        store->check({"hang/nothing"});
      }
    } catch (const std::exception&) {
    }
    return;
  }
  auto t = torch::ones({4});
  world->all_reduce(t, ReduceOp::Sum);
  throw std::runtime_error("all_reduce returned although rank " + std::to_string(world->size() - 1) +
                           " never joined it");
}

void exit_early(shardkit::Comm& comm) {
  auto world = comm.world();
  auto warm = torch::ones({4});
  world->all_reduce(warm, ReduceOp::Sum);
  auto big = torch::ones({4 << 20});
  if (world->rank() == world->size() - 1) {
    auto work = world->all_reduce(big, ReduceOp::Sum, /*async=*/true);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::cout << "comm_worker rank " << world->rank() << ": exiting in the middle" << std::endl;
    std::_Exit(0);
  }
  world->all_reduce(big, ReduceOp::Sum);
  auto t = torch::ones({4});
  world->all_reduce(t, ReduceOp::Sum);
  throw std::runtime_error("collectives returned although the last rank exited");
}

void host_store(shardkit::Comm& comm, const Args& args) {
  const std::chrono::milliseconds timeout(static_cast<std::int64_t>(args.timeout_s * 1000));
  auto server = comm.host_store(args.port, timeout);
  const int port = comm.bound_port();
  expect(port > 0 && (args.port == 0 || port == args.port), "bound_port() is the hosted port");
  std::cout << "bound_port=" << port << std::endl;
  auto client = comm.connect_store("127.0.0.1", port, timeout);
  client->set("plain", "1");
  expect(server->get("plain") == "1", "a key set by a client reaches the host");
  // torchrun's workers use PrefixStore("/worker/attempt_<n>"): the same raw keys.
  client->with_prefix("/worker/attempt_2")->set("arrived/0", "x");
  expect(server->check({"/worker/attempt_2/arrived/0"}), "the attempt prefix joins with '/'");
  expect(server->with_prefix("/worker/attempt_2")->get("arrived/0") == "x", "prefixed get");
  expect(client->add("n", 2) == 2 && server->add("n", 3) == 5, "add counts across clients");
}

}  // namespace comm_worker
