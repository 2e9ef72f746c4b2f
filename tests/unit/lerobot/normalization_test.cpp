// Normalization with a LeRobot dataset's statistics: meta/stats.json read exactly, LeRobot's modes, its processor files.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <functional>
#include <utility>

#include "../../../apps/shardkit-train/src/normalizer.hpp"
#include "../../../apps/shardkit-train/src/processor_files.hpp"
#include "lerobot_test_util.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/files.hpp"
#include "shardkit/normalization.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

using namespace shardkit;
using namespace shardkit::test;

namespace {

const NormalizationMapping kActLike{{FeatureType::Visual, NormalizationMode::MeanStd},
                                    {FeatureType::State, NormalizationMode::MeanStd},
                                    {FeatureType::Action, NormalizationMode::MeanStd}};

FeatureStats stats_of(const std::shared_ptr<Dataset>& dataset) {
  const auto* statistics = shardkit::capability<DatasetStatistics>(std::as_const(*dataset));
  REQUIRE(statistics != nullptr);
  return statistics->stats();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the dataset's statistics are meta/stats.json, cameras with ImageNet's mean and std by default",
          "[lerobot][normalization]") {
  const auto own = stats_of(open_lerobot({{"root", tiny_dataset("video")}, {"use_imagenet_stats", false}}));
  const auto imagenet = stats_of(open_lerobot({{"root", tiny_dataset("video")}}));
  // Every feature of stats.json with its 10 statistics, float32, vectors [6], camera [3, 1, 1].
  REQUIRE(own.size() == 8);
  CHECK(own.at("observation.state").size() == 10);
  CHECK(own.at("action").at("std").sizes().vec() == std::vector<std::int64_t>{6});
  CHECK(own.at("index").at("count").sizes().vec() == std::vector<std::int64_t>{1});
  CHECK(own.at("observation.images.top").at("mean").sizes().vec() == std::vector<std::int64_t>{3, 1, 1});
  CHECK(own.at("action").at("mean").scalar_type() == at::kFloat);
  CHECK(own.at("observation.images.top").at("mean").flatten()[1].item<float>() == 0.5220301775705247f);
  CHECK(imagenet.at("observation.images.top").at("mean").flatten()[1].item<float>() == 0.456f);
  CHECK(imagenet.at("observation.images.top").at("std").flatten()[2].item<float>() == 0.225f);
  CHECK(at::equal(imagenet.at("observation.images.top").at("max"), own.at("observation.images.top").at("max")));
  CHECK(at::equal(imagenet.at("action").at("mean"), own.at("action").at("mean")));
}

TEST_CASE("LeRobot's modes: MEAN_STD, MIN_MAX and the quantiles map the statistics where LeRobot does, and invert",
          "[lerobot][normalization]") {
  const auto dataset = open_lerobot({{"root", tiny_dataset("image")}});
  const auto stats = stats_of(dataset);
  const auto& s = stats.at("observation.state");
  for (const auto mode : {NormalizationMode::MeanStd, NormalizationMode::MinMax, NormalizationMode::Quantiles,
                          NormalizationMode::Quantile10}) {
    DYNAMIC_SECTION(normalization_mode_name(mode)) {
      const auto n = train::dataset_normalizer(*dataset, {{FeatureType::State, mode}});
      CHECK(n.mode_of("observation.state") == mode);
      CHECK(n.mode_of("action") == NormalizationMode::Identity);
      CHECK(n.mode_of("index") == NormalizationMode::Identity);  // never typed, never changed
      const auto [low, high] = mode == NormalizationMode::MeanStd  ? std::pair{s.at("mean"), s.at("mean") + s.at("std")}
                               : mode == NormalizationMode::MinMax ? std::pair{s.at("min"), s.at("max")}
                               : mode == NormalizationMode::Quantiles ? std::pair{s.at("q01"), s.at("q99")}
                                                                      : std::pair{s.at("q10"), s.at("q90")};
      Batch batch{{"observation.state", at::stack({low, high})}, {"action", s.at("mean").clone()}};
      const auto raw = batch;
      n.normalize(batch);
      const auto out = batch.at("observation.state");
      const float at_low = mode == NormalizationMode::MeanStd ? 0.0f : -1.0f;
      CHECK(at::allclose(out[0], at::full({6}, at_low), 0, 1e-6));
      CHECK(at::allclose(out[1], at::ones({6}), 0, 1e-5));
      CHECK(at::equal(batch.at("action"), raw.at("action")));  // ACTION has no mode here
      // Leading batch and time dimensions broadcast; unnormalize inverts.
      const auto x = at::randn({4, 3, 6});
      Batch b{{"observation.state", x}};
      n.normalize(b);
      CHECK(at::allclose(n.unnormalize("observation.state", b.at("observation.state")), x, 1e-5, 1e-5));
    }
  }
}

TEST_CASE("a camera is normalized per channel, a zero range becomes eps as in LeRobot", "[lerobot][normalization]") {
  const auto dataset = open_lerobot({{"root", tiny_dataset("image")}});
  const auto n = train::dataset_normalizer(*dataset, kActLike);
  CHECK(n.mode_of("observation.images.top") == NormalizationMode::MeanStd);
  Batch batch{{"observation.images.top", at::full({2, 3, 96, 128}, 0.485f)}};
  n.normalize(batch);
  // Channel 0 sits at ImageNet's red mean; the others do not.
  CHECK(batch.at("observation.images.top").select(1, 0).abs().max().item<float>() < 1e-6f);
  CHECK(batch.at("observation.images.top").select(1, 1).abs().min().item<float>() > 0.1f);

  FeatureStats flat{{"observation.state", {{"min", at::zeros({2})}, {"max", at::tensor({0.0f, 2.0f})}}}};
  Normalizer minmax({{"observation.state", {FeatureType::State, {2}}}},
                    {{FeatureType::State, NormalizationMode::MinMax}}, flat);
  Batch b{{"observation.state", at::tensor({0.0f, 1.0f}).reshape({1, 2})}};
  minmax.normalize(b);
  CHECK(b.at("observation.state")[0][0].item<float>() == -1.0f);
  CHECK(b.at("observation.state")[0][1].item<float>() == 0.0f);
}

TEST_CASE("missing or misshapen statistics are errors naming the feature; a feature without any stays as is",
          "[lerobot][normalization]") {
  const std::map<std::string, Normalizer::Feature> features{{"observation.state", {FeatureType::State, {6}}},
                                                            {"action", {FeatureType::Action, {6}}}};
  FeatureStats no_std{{"observation.state", {{"mean", at::zeros({6})}}}};
  const auto missing = message_of([&] { (void)Normalizer(features, kActLike, no_std); });
  CHECK(contains(missing, "'observation.state'"));
  CHECK(contains(missing, "MEAN_STD"));
  CHECK(contains(missing, "'std'"));
  FeatureStats wrong{{"observation.state", {{"mean", at::zeros({5})}, {"std", at::ones({5})}}}};
  const auto shape = message_of([&] { (void)Normalizer(features, kActLike, wrong); });
  CHECK(contains(shape, "'observation.state'"));
  CHECK(contains(shape, "[5]"));
  CHECK(contains(shape, "[6]"));
  // No statistics of `action` at all: LeRobot leaves it as is; the normalizer says so.
  FeatureStats state_only{{"observation.state", {{"mean", at::zeros({6})}, {"std", at::ones({6})}}}};
  const Normalizer n(features, kActLike, state_only);
  CHECK(n.unnormalized() == std::vector<std::string>{"action"});
  CHECK(n.mode_of("action") == NormalizationMode::Identity);
  Batch wrong_batch{{"observation.state", at::zeros({4, 5})}};
  CHECK(contains(message_of([&] { n.normalize(wrong_batch); }), "does not end in the feature's shape [6]"));
}

TEST_CASE("the normalization mapping option reads LeRobot's JSON spelling and refuses anything else",
          "[lerobot][normalization]") {
  const auto m = parse_normalization_mapping(R"({"VISUAL": "IDENTITY", "STATE": "MIN_MAX", "ACTION": "MEAN_STD"})",
                                             "--policy.normalization_mapping");
  CHECK(m.at(FeatureType::State) == NormalizationMode::MinMax);
  CHECK(m.at(FeatureType::Visual) == NormalizationMode::Identity);
  CHECK(normalization_mapping_json(parse_normalization_mapping(normalization_mapping_json(m), "x")) ==
        normalization_mapping_json(m));
  CHECK(normalization_mapping_json(m) == R"({"STATE":"MIN_MAX","VISUAL":"IDENTITY","ACTION":"MEAN_STD"})");
  CHECK(parse_normalization_mapping("", "x").empty());
  const auto bad_mode = message_of([] { parse_normalization_mapping(R"({"STATE": "ZSCORE"})", "--policy.nm"); });
  CHECK(contains(bad_mode, "--policy.nm"));
  CHECK(contains(bad_mode, "ZSCORE"));
  CHECK(contains(bad_mode, "MEAN_STD"));
  CHECK(contains(message_of([] { parse_normalization_mapping(R"({"ROBOT": "MEAN_STD"})", "f"); }), "'ROBOT'"));
  CHECK(contains(message_of([] { parse_normalization_mapping("STATE=MEAN_STD", "f"); }), "not valid JSON"));
}

TEST_CASE("LeRobot's processor files: the pipelines' JSON and every statistic as <feature>.<stat>",
          "[lerobot][normalization]") {
  TempDir dir("sk-processor-files");
  for (const auto& [variant, imagenet] : std::vector<std::pair<std::string, bool>>{{"video", true}, {"image", false}}) {
    INFO(variant);
    const auto dataset = open_lerobot({{"root", tiny_dataset(variant)}, {"use_imagenet_stats", imagenet}});
    const auto n = train::dataset_normalizer(
        *dataset, {{FeatureType::State, NormalizationMode::MeanStd}, {FeatureType::Action, NormalizationMode::MeanStd}});
    const auto folder = dir / variant;
    std::filesystem::create_directories(folder + "/pretrained_model");
    const auto files = train::processor_files(n, "cpu");
    REQUIRE(files.size() == 4);
    for (const auto& [path, bytes] : files) write_text_file(folder + "/" + path, bytes);
    const auto check = run_command(python() + " " + shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                                                "/tests/unit/lerobot/check_processor_files.py") +
                                   " " + shell_quote(folder + "/pretrained_model") + " " +
                                   shell_quote(tiny_dataset(variant)) + (imagenet ? " 1" : " 0"));
    INFO(check.output);
    CHECK(check.exit_code == 0);
  }
}

TEST_CASE("batches normalized as LeRobot's NormalizerProcessorStep normalizes them, bit for bit (ACT's mapping)",
          "[lerobot][normalization]") {
  // Reference: tests/data/lerobot-tiny-v3/make_normalized_reference.py (lerobot 0.6.1, ImageNet stats on cameras).
  namespace st = shardkit::safetensors;
  const auto file = st::File::open(std::string(SHARDKIT_SOURCE_DIR) +
                                   "/tests/data/lerobot-tiny-v3/image-normalized-reference.safetensors");
  const auto dataset = open_lerobot({{"root", tiny_dataset("image")}});
  dataset->set_delta_indices(reference_deltas());
  const auto n = train::dataset_normalizer(*dataset, kActLike);
  std::size_t compared = 0;
  for (const std::int64_t index : {0, 29, 64, 104}) {
    auto batch = dataset->get_batch({index});
    n.normalize(batch);
    for (const auto* key : {"observation.state", "action", "observation.images.top"}) {
      INFO("index " << index << ", " << key);
      const auto expected = st::to_tensor(file.get(std::to_string(index) + "/" + key));
      REQUIRE(batch.at(key).sizes() == expected.sizes());
      CHECK(at::equal(batch.at(key), expected));
      ++compared;
    }
  }
  CHECK(compared == file.names().size());
}

