// ACT trains on the tiny LeRobot dataset through the launcher (2 processes, ddp and fsdp), and
// its checkpoint holds LeRobot's keys.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include "../distributed/launch.hpp"
#include "act_runs.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

using namespace shardkit::test;

namespace {

std::vector<std::string> act_run(const std::string& out, const std::string& backend, const std::string& format) {
  return with(act_flags(out), {"--policy.kl_weight=1", "--steps=24", "--batch_size=4",
                               "--distributed_backend=" + backend, "--checkpoint_format=" + format});
}

/// The mean of the first and of the last six logged losses.
std::pair<double, double> first_and_last(const std::vector<double>& l) {
  REQUIRE(l.size() >= 12);
  double a = 0, b = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    a += l[i] / 6;
    b += l[l.size() - 1 - i] / 6;
  }
  return {a, b};
}

}  // namespace

TEST_CASE("act trains on a LeRobot dataset under ddp, fsdp and zero, 2 processes") {
  for (const auto& [backend, format] :
       {std::pair{"ddp", "safetensors"}, std::pair{"fsdp", "dcp"}, std::pair{"zero", "safetensors_dcp"}}) {
    TempDir dir("sk-act-train");
    const auto r = launch(2, act_run(dir / "run", backend, format));
    INFO(backend << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    const auto [first, last] = first_and_last(losses(dir / "run"));
    CHECK(last < 0.7 * first);
    CHECK(contains(r.output, "policy act ("));
    CHECK(contains(r.output, "l1_loss"));
    CHECK(contains(r.output, "kld_loss"));
    // LeRobot's ACT normalization_mapping, applied with the dataset's statistics (ImageNet's for the camera).
    CHECK(contains(r.output, "normalizing with the dataset's statistics: action MEAN_STD, observation.images.top "
                             "MEAN_STD, observation.state MEAN_STD"));
    CHECK(std::filesystem::exists(dir / "run/checkpoints/last/pretrained_model/policy_preprocessor.json"));
    if (std::string(format) == "safetensors") {
      // LeRobot's layout: every key under model., the camera backbone and the VAE encoder included.
      const auto file = shardkit::safetensors::File::open(dir / "run/checkpoints/last/pretrained_model/model.safetensors");
      const auto names = file.names();
      CHECK(std::all_of(names.begin(), names.end(), [](const std::string& n) { return n.rfind("model.", 0) == 0; }));
      CHECK(std::count(names.begin(), names.end(), "model.backbone.layer4.1.bn2.running_var") == 1);
      CHECK(std::count(names.begin(), names.end(), "model.vae_encoder.layers.0.self_attn.in_proj_weight") == 1);
    }
  }
}

TEST_CASE("act: the backbone steps at its own learning rate (LeRobot's parameter groups)") {
  TempDir dir("sk-act-lr");
  const auto r = run_program("shardkit-train", with(act_flags(dir / "run"), {"--policy.optimizer_lr_backbone=0", "--steps=3",
                                                                              "--save_freq=1", "--batch_size=2"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // --optimizer.lr=3e-4 is given, so only the preset's weight decay applies.
  CHECK(contains(r.output, "optimizer: the act policy's preset: weight_decay 0.0001, lr 0 for model.backbone.*"));
  namespace st = shardkit::safetensors;
  const auto at = [&](int step, const std::string& name) {
    const auto file = st::File::open(dir / ("run/checkpoints/00000" + std::to_string(step) +
                                            "/pretrained_model/model.safetensors"));
    return st::to_tensor(file.get(name)).clone();
  };
  for (const auto* name : {"model.backbone.layer1.0.conv1.weight", "model.backbone.conv1.weight"})
    CHECK(torch::equal(at(1, name), at(3, name)));
  const auto* head = "model.action_head.weight";
  CHECK_FALSE(torch::equal(at(1, head), at(3, head)));
}
