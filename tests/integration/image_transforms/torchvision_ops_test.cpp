// shardkit's image transforms against LeRobot 0.6.1's own transform objects (torchvision's kernels), on a real frame.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <sstream>

#include "../../unit/lerobot/lerobot_test_util.hpp"
#include "../distributed/launch.hpp"
#include "image_ops.hpp"
#include "image_transforms.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

using namespace shardkit::test;
namespace lr = shardkit::lerobot;

namespace {

/// "kind factor tx ty" per transform, ';'-separated: what the Python side replays.
std::string describe(const std::vector<lr::DrawnTransform>& transforms) {
  std::ostringstream out;
  out.precision(17);
  for (const auto& t : transforms)
    out << (out.tellp() > 0 ? ";" : "") << lr::transform_name(t.kind) << " " << t.factor << " " << t.tx << " " << t.ty;
  return out.str();
}

}  // namespace

TEST_CASE("each op and drawn composition equals LeRobot's transforms on a frame of the tiny dataset",
          "[image_transforms][torchvision]") {
  TempDir dir("sk-image-transforms");
  auto dataset = open_lerobot({{"root", tiny_dataset("image")}});
  dataset->set_delta_indices(reference_deltas());
  // Two frames of episode 0 of the PNG camera: [2, 3, H, W] in [0, 1].
  const auto frames = dataset->get_batch({5, 6}).at("observation.images.top").select(1, 0).contiguous();
  const auto frame = frames[0].contiguous();
  REQUIRE(frame.size(0) == 3);

  std::map<std::string, at::Tensor> tensors = {{"frame", frame}, {"frames", frames}};
  std::map<std::string, std::string> cases;  // output name -> "input|transforms"
  const auto add = [&](const std::string& input, const std::vector<lr::DrawnTransform>& transforms) {
    const auto name = "case" + std::to_string(cases.size());
    tensors[name] = lr::apply_transforms(transforms, tensors.at(input)).contiguous();
    cases[name] = input + "|" + describe(transforms);
  };
  using K = lr::TransformKind;
  for (const double f : {0.8, 1.17}) add("frame", {{K::Brightness, f}});
  for (const double f : {0.8, 1.2}) add("frame", {{K::Contrast, f}});
  for (const double f : {0.5, 1.43}) add("frame", {{K::Saturation, f}});
  for (const double f : {-0.05, 0.031}) add("frame", {{K::Hue, f}});
  for (const double f : {0.5, 1.5}) add("frame", {{K::Sharpness, f}});
  add("frame", {{K::Affine, 4.3, 5, -3}});
  add("frame", {{K::Affine, -5.0, -6, 4}});
  add("frames", {{K::Contrast, 0.85}});  // the mean is taken per frame
  add("frames", {{K::Affine, 2.5, 3, 2}});
  // LeRobot's defaults, drawn as the loader draws them, on stacked frames.
  lr::ImageTransformsConfig config;
  config.enable = true;
  for (std::uint64_t seed = 0; seed < 12; ++seed)
    add("frames", lr::draw_transforms(config, lr::image_seed(seed, 5, 0), frames.size(-2), frames.size(-1)));
  config.random_order = true;
  config.max_num_transforms = 6;
  for (std::uint64_t seed = 0; seed < 4; ++seed)
    add("frames", lr::draw_transforms(config, lr::image_seed(seed, 5, 0), frames.size(-2), frames.size(-1)));

  std::vector<shardkit::safetensors::TensorRef> refs;
  for (const auto& [name, tensor] : tensors) refs.push_back(shardkit::safetensors::ref_of(name, tensor));
  const auto file = dir / "transforms.safetensors";
  shardkit::safetensors::write_file(file, refs, cases);

  const std::string python = SHARDKIT_LEROBOT_PYTHON;
  const std::string script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/image_transforms/lerobot_transforms.py";
  const auto checked = run_command(shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(file));
  INFO(checked.output);
  CHECK(checked.exit_code == 0);
  CHECK(contains(checked.output, "ok: " + std::to_string(cases.size()) + " cases"));
}
