// Named AdamW against LibTorch's AdamW, the schedules' formulas, global-norm clipping.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <cmath>

#include "../../../apps/shardkit-train/src/adamw.hpp"
#include <shardkit/optim/grad_clip.hpp>
#include "../../../apps/shardkit-train/src/scheduler.hpp"

TEST_CASE("AdamW matches torch::optim::AdamW step for step", "[optim]") {
  torch::manual_seed(3);
  // A contiguous parameter takes PyTorch's fused kernel, a transposed one the per-op path.
  const bool transposed = GENERATE(false, true);
  INFO((transposed ? "transposed parameter" : "contiguous parameter"));
  auto ours = (transposed ? torch::randn({5, 4}).t() : torch::randn({4, 5})).set_requires_grad(true);
  auto theirs = ours.detach().clone().set_requires_grad(true);
  shardkit::AdamW adam({{"w", ours, shardkit::ShardLayout::whole({4, 5}), shardkit::Replicas::none()}}, {}, shardkit::Replicas::none());
  torch::optim::AdamW reference({theirs}, torch::optim::AdamWOptions(1e-3).weight_decay(1e-2));
  for (int step = 0; step < 5; ++step) {
    const auto grad = torch::randn({4, 5});
    ours.mutable_grad() = grad.clone();
    theirs.mutable_grad() = grad.clone();
    adam.step(1e-3);
    reference.step();
    INFO("step " << step);
    CHECK(torch::allclose(ours, theirs, /*rtol=*/1e-6, /*atol=*/1e-7));
  }
  shardkit::ShardedState state;
  adam.state(state);
  REQUIRE(state.tensors.count("optimizer.state.w.exp_avg") == 1);
  CHECK(state.tensors.at("optimizer.state.w.step").chunks[0].data.item<float>() == 5.0f);
}

TEST_CASE("AdamW skips parameters without gradients and zero_grad drops them", "[optim]") {
  auto p = torch::ones({3}).set_requires_grad(true);
  shardkit::AdamW adam({{"p", p, shardkit::ShardLayout::whole({3}), shardkit::Replicas::none()}}, {}, shardkit::Replicas::none());
  adam.step(0.1);
  CHECK(torch::equal(p, torch::ones({3})));
  p.mutable_grad() = torch::ones({3});
  adam.step(0.1);
  CHECK_FALSE(torch::equal(p, torch::ones({3})));
  adam.zero_grad();
  CHECK_FALSE(p.grad().defined());
}

TEST_CASE("constant schedule with warmup follows LeRobot's formula", "[optim][scheduler]") {
  shardkit::SchedulerOptions o;
  o.peak_lr = 1.0;
  o.warmup_steps = 4;
  shardkit::Scheduler s(o);
  CHECK(s.lr(0) == Approx(1.0 / 5.0));
  CHECK(s.lr(2) == Approx((1.0 / 5.0 - 1.0) * 0.5 + 1.0));
  CHECK(s.lr(4) == 1.0);
  CHECK(s.lr(1000) == 1.0);
}

TEST_CASE("cosine schedule decays from peak to decay_lr", "[optim][scheduler]") {
  shardkit::SchedulerOptions o;
  o.type = "cosine";
  o.peak_lr = 2.0;
  o.decay_lr = 0.2;
  o.decay_steps = 100;
  shardkit::Scheduler s(o);
  CHECK(s.lr(0) == Approx(2.0));
  CHECK(s.lr(50) == Approx(0.2 + (2.0 - 0.2) * 0.5));
  CHECK(s.lr(100) == Approx(0.2));
  CHECK(s.lr(500) == Approx(0.2));  // held after the decay
  CHECK(s.state_json(10).find("\"last_epoch\": 10") != std::string::npos);
}

TEST_CASE("linear schedule is transformers' get_linear_schedule_with_warmup", "[optim][scheduler]") {
  // transformers 5.25: get_linear_schedule_with_warmup(optimizer(lr=2), 3, 25) gives, per step,
  // 0, 2/3, 4/3, 2, then 2 x (25 - step) / 22 down to 0 at step 25.
  shardkit::SchedulerOptions o;
  o.type = "linear";
  o.peak_lr = 2.0;
  o.warmup_steps = 3;
  o.decay_steps = 25;
  shardkit::Scheduler s(o);
  CHECK(s.lr(0) == 0.0);
  CHECK(s.lr(1) == Approx(0.6666666666666666));
  CHECK(s.lr(3) == Approx(2.0));
  CHECK(s.lr(4) == Approx(1.9090909090909092));
  CHECK(s.lr(14) == Approx(1.0));
  CHECK(s.lr(24) == Approx(0.09090909090909091));
  CHECK(s.lr(25) == 0.0);
  CHECK(s.lr(30) == 0.0);
  o.warmup_steps = 0;
  CHECK(shardkit::Scheduler(o).lr(0) == Approx(2.0));
}

TEST_CASE("clip_grad_norm matches torch::nn::utils::clip_grad_norm_", "[optim]") {
  torch::manual_seed(5);
  std::vector<torch::Tensor> ours = {torch::randn({3, 3}) * 4, torch::randn({7}) * 4};
  std::vector<torch::Tensor> theirs;
  for (const auto& g : ours) theirs.push_back(torch::zeros_like(g).set_requires_grad(true));
  for (std::size_t i = 0; i < ours.size(); ++i) theirs[i].mutable_grad() = ours[i].clone();
  const double total = shardkit::clip_grad_norm(ours, 1.0);
  const double reference = torch::nn::utils::clip_grad_norm_(theirs, 1.0);
  CHECK(total == Approx(reference).epsilon(1e-6));
  for (std::size_t i = 0; i < ours.size(); ++i)
    CHECK(torch::allclose(ours[i], theirs[i].grad(), 1e-5, 1e-7));
  // The reduction hook turns a local sum of squares into a global one.
  const double doubled = shardkit::clip_grad_norm(ours, 0.0, [](double s) { return 2 * s; });
  CHECK(doubled == Approx(std::sqrt(2.0) * std::sqrt(shardkit::local_grad_sq_norm(ours))));
}

TEST_CASE("AdamW's param group has torch.optim.AdamW's fields and names what a checkpoint changes", "[optim]") {
  auto w = torch::ones({2});
  shardkit::AdamWOptions options;
  options.weight_decay = 0.05;
  shardkit::AdamW adam({{"a.w", w, shardkit::ShardLayout::whole({2}), shardkit::Replicas::none()}}, options, shardkit::Replicas::none());
  shardkit::ShardedState state;
  adam.param_groups(state, 2.5e-4);
  CHECK(state.objects.size() == 13);
  CHECK(state.objects.at("optimizer.param_groups.0.lr") == shardkit::ObjectValue(2.5e-4));
  CHECK(state.objects.at("optimizer.param_groups.0.params") ==
        shardkit::ObjectValue(std::vector<std::string>{"a.w"}));
  CHECK(state.objects.at("optimizer.param_groups.0.foreach") == shardkit::ObjectValue(std::monostate{}));
  CHECK(adam.param_group_differences(state).empty());

  state.objects["optimizer.param_groups.0.weight_decay"] = 0.1;
  state.objects["optimizer.param_groups.0.betas"] = std::vector<double>{0.9, 0.95};
  state.objects.erase("optimizer.param_groups.0.eps");  // not in the checkpoint: nothing to say
  const auto differences = adam.param_group_differences(state);
  REQUIRE(differences.size() == 2);
  CHECK(differences[0] == "betas=0.9,0.95 (the options say 0.9,0.999)");
  CHECK(differences[1] == "weight_decay=0.1 (the options say 0.05)");
}
