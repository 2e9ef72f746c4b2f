// shardkit-train's own options are declared once: the table gives each its spec and its member of
// TrainOptions, so the schema, the defaults and the values the trainer reads cannot disagree.
#include "../../../apps/shardkit-train/src/train_options.hpp"  // before Catch (LibTorch): CHECK is Catch's

#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <string>

#include "shardkit/config_resolution.hpp"

using namespace shardkit;
using train::TrainOptions;

namespace {

Resolution resolved(const std::vector<std::string>& args) {
  Schema schema;
  schema.add("", train::core_options().data(), train::core_options().size(), "core");
  return resolve_all(schema, {}, parse_flags(args));
}

}  // namespace

TEST_CASE("every trainer option has one spec, and its default reaches its member", "[train][options]") {
  std::set<std::string> names;
  for (const auto& spec : train::core_options()) {
    INFO(spec.name);
    CHECK(names.insert(spec.name).second);
    CHECK(train::default_of(spec.name) == spec.default_value);
  }
  CHECK(names.size() > 50);

  const auto resolution = resolved({});
  REQUIRE(resolution.errors.empty());
  const auto options = TrainOptions::from(resolution.config);
  CHECK(options.policy_type == "mlp");
  CHECK(options.steps == 1000);
  CHECK(options.batch_size == 8);
  CHECK(options.optimizer_lr == 0.001);
  CHECK(options.save_checkpoint);
  CHECK_FALSE(options.resume);
  CHECK(options.distributed_timeout_s == 600.0);
  CHECK(options.accelerator_gradient_accumulation_steps == 1);
  CHECK_FALSE(options.checkpoint_verify.has_value());  // no default: unset unless given
}

TEST_CASE("given values reach their members with the option's type", "[train][options]") {
  const auto resolution = resolved({"--steps=20", "--optimizer.lr=3e-4", "--save_checkpoint=false",
                                    "--checkpoint.verify=false", "--policy.type=act",
                                    "--accelerator.gradient_accumulation.steps=4"});
  REQUIRE(resolution.errors.empty());
  const auto options = TrainOptions::from(resolution.config);
  CHECK(options.steps == 20);
  CHECK(options.optimizer_lr == 3e-4);
  CHECK_FALSE(options.save_checkpoint);
  REQUIRE(options.checkpoint_verify.has_value());
  CHECK_FALSE(*options.checkpoint_verify);
  CHECK(options.policy_type == "act");
  CHECK(options.accelerator_gradient_accumulation_steps == 4);
}

TEST_CASE("a name the table does not declare has no default", "[train][options]") {
  CHECK_THROWS_AS(train::default_of("optimizer.learning_rate"), std::logic_error);
}
