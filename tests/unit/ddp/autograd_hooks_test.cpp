// The autograd compatibility layer: hooks after gradient accumulation, end-of-backward callbacks.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <shardkit/autograd_hooks.hpp>
#include <shardkit/error.hpp>

TEST_CASE("the grad-accumulated hook sees the accumulated gradient", "[ddp][hooks]") {
  auto w = torch::ones({3}).set_requires_grad(true);
  std::vector<torch::Tensor> seen;
  auto handle = shardkit::on_grad_accumulated(w, [&] {
    REQUIRE(w.grad().defined());
    seen.push_back(w.grad().clone());
  });
  CHECK(handle.active());
  (w * 3).sum().backward();
  // A second, independent graph: the hook must survive the first graph's release.
  (w * 3).sum().backward();
  REQUIRE(seen.size() == 2);
  CHECK(torch::equal(seen[0], torch::full({3}, 3.0f)));
  CHECK(torch::equal(seen[1], torch::full({3}, 6.0f)));
}

TEST_CASE("a parameter used twice in one graph runs its hook once, after the sum", "[ddp][hooks]") {
  auto w = torch::ones({2}).set_requires_grad(true);
  int calls = 0;
  torch::Tensor at_hook;
  auto handle = shardkit::on_grad_accumulated(w, [&] {
    ++calls;
    at_hook = w.grad().clone();
  });
  (w * 2 + w * 5).sum().backward();
  CHECK(calls == 1);
  CHECK(torch::equal(at_hook, torch::full({2}, 7.0f)));
}

TEST_CASE("a reset handle no longer runs its callback", "[ddp][hooks]") {
  auto w = torch::ones({2}).set_requires_grad(true);
  int calls = 0;
  auto handle = shardkit::on_grad_accumulated(w, [&] { ++calls; });
  w.sum().backward();
  handle.reset();
  CHECK_FALSE(handle.active());
  w.sum().backward();
  CHECK(calls == 1);
  CHECK(torch::equal(w.grad(), torch::full({2}, 2.0f)));  // accumulation itself still works
  {
    auto scoped = shardkit::on_grad_accumulated(w, [&] { ++calls; });
    auto moved = std::move(scoped);
    w.sum().backward();
  }
  w.sum().backward();
  CHECK(calls == 2);
}

TEST_CASE("the end-of-backward callback runs once, after every gradient", "[ddp][hooks]") {
  auto a = torch::ones({2}).set_requires_grad(true);
  auto b = torch::ones({2}).set_requires_grad(true);
  std::vector<std::string> events;
  bool queued = false;
  auto on_ready = [&](const std::string& name) {
    events.push_back(name);
    if (!queued) {
      queued = true;
      shardkit::queue_backward_end([&] {
        events.push_back(std::string("end:") + (a.grad().defined() && b.grad().defined() ? "both" : "missing"));
      });
    }
  };
  auto ha = shardkit::on_grad_accumulated(a, [&] { on_ready("a"); });
  auto hb = shardkit::on_grad_accumulated(b, [&] { on_ready("b"); });
  (a * torch::tanh(b)).sum().backward();
  REQUIRE(events.size() == 3);
  CHECK(events.back() == "end:both");
}

TEST_CASE("misuse of the hooks is refused with a shardkit error", "[ddp][hooks]") {
  CHECK_THROWS_AS(shardkit::queue_backward_end([] {}), shardkit::RuntimeError);
  auto w = torch::ones({2}).set_requires_grad(true);
  auto not_leaf = w * 2;
  CHECK_THROWS_AS(shardkit::on_grad_accumulated(not_leaf, [] {}), shardkit::RuntimeError);
  CHECK_THROWS_AS(shardkit::on_grad_accumulated(torch::ones({2}), [] {}), shardkit::RuntimeError);
}

TEST_CASE("an error thrown by the callback comes out of backward()", "[ddp][hooks]") {
  auto w = torch::ones({2}).set_requires_grad(true);
  auto handle = shardkit::on_grad_accumulated(w, [] { throw shardkit::RuntimeError("stop here"); });
  CHECK_THROWS_WITH(w.sum().backward(), Catch::Matchers::Contains("stop here"));
}
