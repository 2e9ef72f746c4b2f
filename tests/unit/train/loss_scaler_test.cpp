// The fp16 loss scaler: backoff on overflow, growth after clean updates, unscaling, and its saved state.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../../../apps/shardkit-train/src/loss_scaler.hpp"
#include "scripted_group.hpp"
#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"

using shardkit::FormatError;
using shardkit::ReduceOp;
using shardkit::test::ScriptedGroup;
using shardkit::train::LossScaler;

TEST_CASE("the loss scaler halves on an overflow and doubles after growth_interval clean updates",
          "[train][loss_scaler]") {
  LossScaler scaler(65536.0, 3);
  CHECK(scaler.scale() == 65536.0);
  scaler.update(false);
  scaler.update(false);
  CHECK(scaler.scale() == 65536.0);  // two clean updates of three
  scaler.update(false);
  CHECK(scaler.scale() == 131072.0);
  CHECK(scaler.skipped_updates() == 0);

  scaler.update(false);
  scaler.update(false);
  scaler.update(true);  // the overflow also restarts the count of clean updates
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.skipped_updates() == 1);
  scaler.update(false);
  scaler.update(false);
  CHECK(scaler.scale() == 65536.0);
  scaler.update(false);
  CHECK(scaler.scale() == 131072.0);

  scaler.update(true);
  scaler.update(true);
  CHECK(scaler.scale() == 32768.0);
  CHECK(scaler.skipped_updates() == 3);
}

TEST_CASE("the loss scaler's state holds GradScaler's fields and a loaded one continues the count",
          "[train][loss_scaler]") {
  LossScaler saved(1024.0, 5);
  for (int i = 0; i < 3; ++i) saved.update(false);
  saved.update(true);                               // 512, tracker 0
  for (int i = 0; i < 4; ++i) saved.update(false);  // tracker 4: one clean update from growing
  const auto text = saved.state_json();
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');

  const auto value = boost::json::parse(text);
  REQUIRE(value.is_object());
  const auto& o = value.as_object();
  CHECK(o.at("scale").to_number<double>() == 512.0);
  CHECK(o.at("growth_factor").to_number<double>() == 2.0);
  CHECK(o.at("backoff_factor").to_number<double>() == 0.5);
  CHECK(o.at("growth_interval").to_number<std::int64_t>() == 5);
  CHECK(o.at("_growth_tracker").to_number<std::int64_t>() == 4);
  CHECK(o.at("skipped_updates").to_number<std::int64_t>() == 1);

  LossScaler loaded(1.0, 5);
  loaded.load_json(text, "checkpoints/000010/training_state/scaler_state.json");
  CHECK(loaded.scale() == 512.0);
  CHECK(loaded.skipped_updates() == 1);
  loaded.update(false);  // the fifth clean update in a row: the loaded tracker counted four
  CHECK(loaded.scale() == 1024.0);
}

TEST_CASE("the loss scaler reads PyTorch's GradScaler state, which has no skipped_updates", "[train][loss_scaler]") {
  LossScaler scaler(65536.0, 2);
  scaler.load_json(R"({"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2, )"
                   R"("_growth_tracker": 1})",
                   "scaler_state.json");
  CHECK(scaler.scale() == 8.0);
  CHECK(scaler.skipped_updates() == 0);
  scaler.update(false);
  CHECK(scaler.scale() == 16.0);
}

TEST_CASE("a malformed loss-scaler state is a FormatError naming the file", "[train][loss_scaler]") {
  LossScaler scaler(256.0, 2);
  const std::string origin = "run/checkpoints/000004/training_state/scaler_state.json";
  for (const std::string text : {"", "not json", "[1, 2]", R"({"scale": 4.0})", R"({"_growth_tracker": 0})"}) {
    INFO("state: " << text);
    CHECK_THROWS_AS(scaler.load_json(text, origin), FormatError);
    CHECK_THROWS_WITH(scaler.load_json(text, origin), Catch::Contains(origin + " is not a loss-scaler state"));
  }
  const std::string mistyped = R"({"scale": "big", "_growth_tracker": 0})";
  CHECK_THROWS_AS(scaler.load_json(mistyped, origin), FormatError);
  CHECK_THROWS_WITH(scaler.load_json(mistyped, origin),
                    Catch::Contains(origin + ": a field of the loss-scaler state has the wrong type"));
  for (const std::string text : {R"({"scale": 0, "_growth_tracker": 0})", R"({"scale": -2.0, "_growth_tracker": 0})"}) {
    INFO("state: " << text);
    CHECK_THROWS_WITH(scaler.load_json(text, origin),
                      Catch::Contains(origin + ": the loss scale is ") && Catch::Contains("must be a positive finite number"));
  }
  CHECK_THROWS_WITH(scaler.load_json(R"({"scale": 2.0, "_growth_tracker": -1})", origin),
                    Catch::Contains("must not be negative"));
  CHECK(scaler.scale() == 256.0);  // nothing was taken from the refused states
}

TEST_CASE("unscale divides the gradients by the scale and reports non-finite ones", "[train][loss_scaler]") {
  auto world = shardkit::make_local_group();
  LossScaler scaler(4.0, 10);

  auto g = torch::full({3}, 8.0);
  const std::vector<torch::Tensor> grads{torch::Tensor(), g};  // a parameter without a gradient is skipped
  CHECK(scaler.unscale(grads, *world));
  CHECK(torch::equal(g, torch::full({3}, 2.0)));

  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(scaler.unscale({torch::ones({2}), torch::tensor({1.0f, inf})}, *world));
  CHECK_FALSE(scaler.unscale({torch::tensor({nan, 1.0f})}, *world));
  CHECK(scaler.scale() == 4.0);  // update() decides the scale, not unscale()
}

TEST_CASE("unscale reports an overflow on another rank even when this rank's gradients are finite",
          "[train][loss_scaler]") {
  LossScaler scaler(2.0, 10);
  {
    ScriptedGroup peer_overflowed({torch::ones({1})});
    auto g = torch::full({2}, 4.0);
    CHECK_FALSE(scaler.unscale({g}, peer_overflowed));
    CHECK(torch::equal(g, torch::full({2}, 2.0)));  // divided all the same: the update is what is skipped
    REQUIRE(peer_overflowed.used() == 1);
    CHECK(peer_overflowed.ops[0] == ReduceOp::Max);
  }
  {
    ScriptedGroup peer_fine({torch::zeros({1})});
    CHECK(scaler.unscale({torch::full({2}, 4.0)}, peer_fine));
    CHECK(peer_fine.used() == 1);
  }
}
