// LeRobot's ImageTransforms (a weighted random subset of colour, sharpness and affine jitter), seeded per sample.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace shardkit::lerobot {

/// The transforms LeRobot 0.6.1's ImageTransformsConfig lists, in its order (which is the
/// order they are applied in unless random_order).
enum class TransformKind { Brightness, Contrast, Saturation, Hue, Sharpness, Affine };
constexpr std::size_t kNumTransformKinds = 6;

/// LeRobot's name of a transform ("brightness", ..., "affine").
const char* transform_name(TransformKind kind);

/// A closed range [lo, hi] a transform's parameter is drawn from, uniformly.
struct Range {
  double lo = 0;
  double hi = 0;
};

/// LeRobot's ImageTransformsConfig with its defaults (--dataset.image_transforms.*).
struct ImageTransformsConfig {
  bool enable = false;                 ///< off by default, as in LeRobot
  std::int64_t max_num_transforms = 3;  ///< how many transforms each camera image gets
  bool random_order = false;           ///< apply the chosen ones in the order drawn, not LeRobot's list order
  /// Sampling weight of each transform (TransformKind order); 0 leaves it out.
  std::array<double, kNumTransformKinds> weights = {1, 1, 1, 1, 1, 1};
  Range brightness{0.8, 1.2};  ///< ColorJitter brightness factor
  Range contrast{0.8, 1.2};    ///< ColorJitter contrast factor
  Range saturation{0.5, 1.5};  ///< ColorJitter saturation factor
  Range hue{-0.05, 0.05};      ///< ColorJitter hue shift, within [-0.5, 0.5]
  Range sharpness{0.5, 1.5};   ///< SharpnessJitter factor
  Range degrees{-5.0, 5.0};    ///< RandomAffine rotation in degrees
  /// RandomAffine's largest translation, as fractions of the width and height.
  Range translate{0.05, 0.05};
};

/// Parses "lo,hi" (the value of `flag`), e.g. "0.8,1.2". Throws ConfigError naming the flag.
Range parse_range(const std::string& text, const std::string& flag);
/// Throws ConfigError naming the --dataset.image_transforms.* flag of anything LeRobot would
/// reject: a negative factor, lo > hi, hue outside [-0.5, 0.5], a translation outside [0, 1],
/// max_num_transforms < 1, weights all 0 while enabled.
void validate(const ImageTransformsConfig& config);

/// One transform with its drawn parameter.
struct DrawnTransform {
  TransformKind kind = TransformKind::Brightness;
  double factor = 0;          ///< the colour / sharpness factor, or the affine angle in degrees
  std::int64_t tx = 0, ty = 0;  ///< the affine translation in pixels
};

/// The transforms one image gets (RandomSubsetApply): min(max_num_transforms, transforms of
/// positive weight) of them, drawn by weight without replacement, in list order unless
/// random_order, each with its parameter drawn; a pure function of `seed` and the image size.
std::vector<DrawnTransform> draw_transforms(const ImageTransformsConfig& config, std::uint64_t seed,
                                            std::int64_t height, std::int64_t width);

/// `image` ([..., C, H, W], float in [0, 1]) with `transforms` applied in turn; every leading
/// index (e.g. each stacked frame of a camera) gets the same transforms.
at::Tensor apply_transforms(const std::vector<DrawnTransform>& transforms, const at::Tensor& image);

/// The seed of camera number `camera` of dataset sample `index` under the batch seed `seed`.
std::uint64_t image_seed(std::uint64_t seed, std::int64_t index, std::size_t camera);

}  // namespace shardkit::lerobot
