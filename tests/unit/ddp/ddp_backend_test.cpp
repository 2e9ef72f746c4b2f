// The ddp backend plugin on one process and on a scripted two-rank group: gradients, buckets, errors.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include <cmath>

#include <shardkit/optim/grad_clip.hpp>
#include <shardkit/runtime.hpp>

#include "ddp_test_util.hpp"

using Catch::Matchers::Contains;
using shardkit::DeviceMesh;
using shardkit::MeshShape;
using shardkit::Batch;
using shardkit::test::batch_of;
using shardkit::test::copy_of;
using shardkit::test::DdpPlugin;
using shardkit::test::micro_step;
using shardkit::test::ScriptedComm;
using shardkit::test::ScriptedGroup;
using shardkit::test::TinyPolicy;

namespace {

/// A two-rank mesh whose world is `group`; this process is group->rank().
struct ScriptedMesh {
  explicit ScriptedMesh(int rank)
      : group(scripted_group(rank)), comm(group), mesh(MeshShape{2, 1}, rank, &comm) {}
  /// The group, with rank 0 holding 0.25 everywhere in its broadcasts.
  static std::shared_ptr<ScriptedGroup> scripted_group(int rank) {
    auto group = std::make_shared<ScriptedGroup>(rank);
    group->root_value = 0.25f;
    return group;
  }
  std::shared_ptr<ScriptedGroup> group;
  ScriptedComm comm;
  DeviceMesh mesh;
};

/// Checks that every parameter of `ddp` has the gradient `expected(reference grad)`.
template <class F>
void check_grads(TinyPolicy& ddp, TinyPolicy& reference, F expected) {
  auto ref = reference.named_parameters();
  for (const auto& item : ddp.named_parameters()) {
    INFO(item.key());
    const auto& want = ref[item.key()].grad();
    REQUIRE(want.defined());
    REQUIRE(item.value().grad().defined());
    CHECK(torch::allclose(item.value().grad(), expected(want), 1e-6, 1e-7));
  }
}

void backward_on(TinyPolicy& policy, const Batch& batch) { policy.forward(batch).loss.backward(); }

}  // namespace

TEST_CASE("on one process ddp gives the same gradients as no backend", "[ddp][backend]") {
  for (const std::string cap : {"25", "0.0001"}) {
    INFO("bucket_cap_mb=" << cap);
    DdpPlugin plugin;
    auto backend = plugin.create({{"bucket_cap_mb", cap}});
    torch::manual_seed(1);
    auto policy = std::make_shared<TinyPolicy>();
    auto reference = copy_of(*policy);
    backend->setup(*policy);
    const auto batch = batch_of(5);
    micro_step(*backend, *policy, batch, true);
    backward_on(*reference, batch);
    check_grads(*policy, *reference, [](const torch::Tensor& g) { return g; });
    // 0.0001 MB = 104 bytes: {spare.bias, spare.weight, fc2.bias}, {fc2.weight, fc1.bias}, {fc1.weight}.
    const std::string buckets = cap == "25" ? "1 buckets" : "3 buckets";
    CHECK_THAT(plugin.log.str(),
               Contains("ddp: " + buckets + " (cap " + cap + " MB) over 6 parameters, world 1"));
  }
}

TEST_CASE("ddp starts from rank 0's values and averages gradients over the group", "[ddp][backend]") {
  ScriptedMesh two(1);
  DdpPlugin plugin;
  auto backend = plugin.create({{"bucket_cap_mb", "0.0001"}}, &two.mesh);
  auto policy = std::make_shared<TinyPolicy>();
  backend->setup(*policy);
  for (const auto& p : policy->parameters()) CHECK(torch::all(p == 0.25f).item<bool>());
  CHECK(policy->seen.item<float>() == 0.25f);

  auto reference = copy_of(*policy);
  // The peer's gradients are three times ours: the average is twice ours.
  two.group->peer = [](const torch::Tensor& mine) { return mine * 3; };
  bool fc1_pending_at_first_launch = false;
  two.group->on_all_reduce = [&] {
    if (two.group->count("all_reduce") == 1) fc1_pending_at_first_launch = !policy->fc1->weight.grad().defined();
  };
  const auto batch = batch_of(6);
  backend->begin_micro_step(true);
  backward_on(*policy, batch);
  // Every bucket was launched from backward itself, the first before fc1 had its gradient.
  CHECK(two.group->count("all_reduce") == 3);
  CHECK(fc1_pending_at_first_launch);
  const auto broadcasts = two.group->count("broadcast");
  backend->finish_gradients();
  CHECK(two.group->count("all_reduce") == 3);
  backward_on(*reference, batch);
  check_grads(*policy, *reference, [](const torch::Tensor& g) { return g * 2; });
  // Buffers drift in forward; rank 0's are copied back after backward.
  CHECK(two.group->count("broadcast") == broadcasts + 1);
  CHECK(policy->seen.item<float>() == 0.25f);
}

TEST_CASE("with overlap=false every all-reduce waits until after backward", "[ddp][backend]") {
  ScriptedMesh two(0);
  DdpPlugin plugin;
  auto backend = plugin.create({{"bucket_cap_mb", "0.0001"}, {"overlap", "false"}}, &two.mesh);
  auto policy = std::make_shared<TinyPolicy>();
  auto reference = copy_of(*policy);
  backend->setup(*policy);
  const auto batch = batch_of(7);
  backend->begin_micro_step(true);
  backward_on(*policy, batch);
  CHECK(two.group->count("all_reduce") == 0);
  backend->finish_gradients();
  CHECK(two.group->count("all_reduce") == 3);
  backward_on(*reference, batch);
  check_grads(*policy, *reference, [](const torch::Tensor& g) { return g; });
}

TEST_CASE("micro-steps without sync accumulate locally and the sync step carries the sum",
          "[ddp][backend]") {
  ScriptedMesh two(0);
  DdpPlugin plugin;
  auto backend = plugin.create({}, &two.mesh);
  auto policy = std::make_shared<TinyPolicy>();
  auto reference = copy_of(*policy);
  backend->setup(*policy);
  two.group->peer = [](const torch::Tensor& mine) { return torch::ones_like(mine); };

  micro_step(*backend, *policy, batch_of(8), false);
  micro_step(*backend, *policy, batch_of(9), false);
  CHECK(two.group->count("all_reduce") == 0);
  backward_on(*reference, batch_of(8));
  backward_on(*reference, batch_of(9));
  check_grads(*policy, *reference, [](const torch::Tensor& g) { return g; });

  micro_step(*backend, *policy, batch_of(10), true);
  CHECK(two.group->count("all_reduce") == 1);
  backward_on(*reference, batch_of(10));
  check_grads(*policy, *reference, [](const torch::Tensor& g) { return (g + 1) / 2; });
}

TEST_CASE("a parameter without a gradient is an error naming it, before its collective",
          "[ddp][backend]") {
  ScriptedMesh two(0);
  DdpPlugin plugin;
  auto backend = plugin.create({}, &two.mesh);
  auto policy = std::make_shared<TinyPolicy>();
  policy->use_spare = false;
  backend->setup(*policy);
  CHECK_THROWS_AS(micro_step(*backend, *policy, batch_of(11), true), shardkit::RuntimeError);
  CHECK_THROWS_WITH(
      micro_step(*backend, *policy, batch_of(11), true),
      "parameters 'spare.weight', 'spare.bias' received no gradient on rank 0 in this backward; "
      "if the policy leaves parameters unused on purpose, pass "
      "--accelerator.ddp.find_unused_parameters=true");
  // spare's bucket is the first to launch (one bucket here): nothing was sent at all.
  CHECK(two.group->count("all_reduce") == 0);

  // One frozen, one unused: the message names the one trainable parameter.
  DdpPlugin plugin2;
  auto backend2 = plugin2.create();
  auto policy2 = std::make_shared<TinyPolicy>();
  policy2->use_spare = false;
  policy2->spare->bias.set_requires_grad(false);
  backend2->setup(*policy2);
  CHECK_THROWS_WITH(micro_step(*backend2, *policy2, batch_of(11), true),
                    "parameter 'spare.weight' received no gradient on rank 0 in this backward; "
                    "if the policy leaves parameters unused on purpose, pass "
                    "--accelerator.ddp.find_unused_parameters=true");
}

TEST_CASE("find_unused_parameters averages zeros for unused parameters", "[ddp][backend]") {
  for (const bool peer_used_spare : {true, false}) {
    INFO("peer used spare: " << peer_used_spare);
    ScriptedMesh two(0);
    DdpPlugin plugin;
    auto backend = plugin.create({{"find_unused_parameters", "true"}}, &two.mesh);
    auto policy = std::make_shared<TinyPolicy>();
    policy->use_spare = false;
    auto reference = copy_of(*policy);
    backend->setup(*policy);
    // The peer contributes ones everywhere (it used everything), or exactly what we have
    // (zeros for spare, and the same usage map: nobody used spare).
    if (peer_used_spare)
      two.group->peer = [](const torch::Tensor& mine) { return torch::ones_like(mine); };
    micro_step(*backend, *policy, batch_of(12), true);
    CHECK(two.group->count("all_reduce") == 2);  // one bucket, then the usage map
    backward_on(*reference, batch_of(12));
    auto ref = reference->named_parameters();
    for (const auto& item : policy->named_parameters()) {
      INFO(item.key());
      const auto& grad = item.value().grad();
      if (item.key().rfind("spare.", 0) == 0) {
        if (peer_used_spare) {
          REQUIRE(grad.defined());
          CHECK(torch::allclose(grad, torch::full_like(item.value(), 0.5f)));
        } else {
          CHECK_FALSE(grad.defined());
        }
      } else {
        REQUIRE(grad.defined());
        const auto& want = ref[item.key()].grad();
        CHECK(torch::allclose(grad, peer_used_spare ? (want + 1) / 2 : want, 1e-6, 1e-7));
      }
    }
  }
}

TEST_CASE("a second backward into a bucket already sent is refused", "[ddp][backend]") {
  DdpPlugin plugin;
  auto backend = plugin.create();
  auto policy = std::make_shared<TinyPolicy>();
  backend->setup(*policy);
  backend->begin_micro_step(true);
  auto loss = policy->forward(batch_of(13)).loss;
  loss.backward({}, /*retain_graph=*/true);
  CHECK_THROWS_WITH(loss.backward(), Contains("after its bucket was already all-reduced"));
}

TEST_CASE("ddp reports replicated parameters and state, and clips by the local norm",
          "[ddp][backend]") {
  DdpPlugin plugin;
  auto backend = plugin.create();
  auto policy = std::make_shared<TinyPolicy>();
  policy->spare->bias.set_requires_grad(false);
  auto reference = copy_of(*policy);
  reference->spare->bias.set_requires_grad(false);
  backend->setup(*policy);

  std::vector<std::string> names;
  for (const auto& p : backend->parameters()) {
    names.push_back(p.name);
    CHECK(p.replicas == shardkit::Replicas::among(0, 1));  // a group of one
  }
  CHECK(names == std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "spare.weight"});

  shardkit::ShardedState state;
  backend->model_state(state);
  CHECK(state.keys_with_prefix("model.") ==
        std::vector<std::string>{"model.fc1.bias", "model.fc1.weight", "model.fc2.bias",
                                 "model.fc2.weight", "model.seen", "model.spare.bias",
                                 "model.spare.weight"});
  CHECK(state.tensors.at("model.seen").replicas == shardkit::Replicas::among(0, 1));
  CHECK(state.tensors.at("model.fc1.weight").chunks.at(0).data.data_ptr() ==
        policy->fc1->weight.data_ptr());

  micro_step(*backend, *policy, batch_of(14), true);
  backward_on(*reference, batch_of(14));
  std::vector<torch::Tensor> ref_grads;
  for (const auto& p : reference->parameters())
    if (p.requires_grad()) ref_grads.push_back(p.grad());
  const double want = std::sqrt(shardkit::local_grad_sq_norm(ref_grads));
  CHECK(backend->clip_grad_norm(want / 4) == Approx(want));
  CHECK(std::sqrt(shardkit::local_grad_sq_norm({policy->fc1->weight.grad(), policy->fc1->bias.grad(),
                                                policy->fc2->weight.grad(), policy->fc2->bias.grad(),
                                                policy->spare->weight.grad()})) ==
        Approx(want / 4).epsilon(1e-4));
}

TEST_CASE("ddp refuses a bad bucket cap and a multi-process run without a mesh", "[ddp][backend]") {
  DdpPlugin plugin;
  CHECK_THROWS_AS(plugin.create({{"bucket_cap_mb", "0"}}), shardkit::ConfigError);
  CHECK_THROWS_WITH(plugin.create({{"bucket_cap_mb", "0"}}),
                    Contains("--accelerator.ddp.bucket_cap_mb=0") && Contains("greater than 0"));
  CHECK_THROWS_AS(plugin.create({{"bucket_cap_mb", "-1"}}), shardkit::ConfigError);

  shardkit::Runtime runtime;
  runtime.rank = 1;
  runtime.world_size = 2;
  const auto* descriptor = plugin.registry.get("backend", "ddp").descriptor;
  shardkit::Schema schema;
  schema.add("", descriptor->options, descriptor->num_options, "backend 'ddp'");
  shardkit::PluginContext ctx;
  ctx.options = shardkit::resolve(schema, {}, {});
  ctx.runtime = &runtime;
  CHECK_THROWS_WITH(plugin.registry.create("backend", "ddp", ctx),
                    Contains("without the run's device mesh") && Contains("rank 1"));
}
