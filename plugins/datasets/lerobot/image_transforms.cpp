// RandomSubsetApply over LeRobot's default jitter transforms: weighted draws from a per-sample seed.
#include "image_transforms.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <shardkit/augmentation.hpp>
#include <shardkit/error.hpp>

#include "image_ops.hpp"

namespace shardkit::lerobot {
namespace {

const char* const kNames[kNumTransformKinds] = {"brightness", "contrast", "saturation", "hue", "sharpness", "affine"};

/// A uniform double in [0, 1) from 53 random bits.
double uniform01(std::uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; }

double uniform(std::uint64_t& state, const Range& range) { return range.lo + (range.hi - range.lo) * uniform01(state); }

void check_range(const Range& r, double min, double max, const std::string& flag) {
  if (r.lo <= r.hi && r.lo >= min && r.hi <= max) return;
  std::ostringstream message;
  message << "--dataset.image_transforms." << flag << "=" << r.lo << "," << r.hi << ": give lo,hi with lo <= hi";
  if (!std::isinf(min)) message << ", lo >= " << min;
  if (!std::isinf(max)) message << ", hi <= " << max;
  throw ConfigError(message.str());
}

}  // namespace

const char* transform_name(TransformKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

Range parse_range(const std::string& text, const std::string& flag) {
  const auto comma = text.find(',');
  Range range;
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    std::size_t used_lo = 0, used_hi = 0;
    const auto lo_text = text.substr(0, comma), hi_text = text.substr(comma + 1);
    range.lo = std::stod(lo_text, &used_lo);
    range.hi = std::stod(hi_text, &used_hi);
    if (used_lo != lo_text.size() || used_hi != hi_text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw ConfigError("--dataset.image_transforms." + flag + "=" + text +
                      ": expected two numbers 'lo,hi', e.g. --dataset.image_transforms." + flag + "=0.8,1.2");
  }
  return range;
}

void validate(const ImageTransformsConfig& c) {
  const double inf = INFINITY;
  check_range(c.brightness, 0, inf, "brightness");
  check_range(c.contrast, 0, inf, "contrast");
  check_range(c.saturation, 0, inf, "saturation");
  check_range(c.hue, -0.5, 0.5, "hue");
  check_range(c.sharpness, 0, inf, "sharpness");
  check_range(c.degrees, -inf, inf, "affine_degrees");
  if (c.translate.lo < 0 || c.translate.lo > 1 || c.translate.hi < 0 || c.translate.hi > 1) {
    std::ostringstream message;
    message << "--dataset.image_transforms.affine_translate=" << c.translate.lo << "," << c.translate.hi
            << ": the largest horizontal and vertical shifts, as fractions of the image in [0, 1]";
    throw ConfigError(message.str());
  }
  if (c.max_num_transforms < 1)
    throw ConfigError("--dataset.image_transforms.max_num_transforms=" + std::to_string(c.max_num_transforms) +
                      ": give at least 1");
  bool any = false;
  for (std::size_t k = 0; k < kNumTransformKinds; ++k) {
    if (c.weights[k] < 0)
      throw ConfigError(std::string("--dataset.image_transforms.tfs.") + kNames[k] +
                        ".weight is negative: give a weight >= 0 (0 leaves the transform out)");
    any = any || c.weights[k] > 0;
  }
  if (c.enable && !any)
    throw ConfigError("--dataset.image_transforms.enable=true but every --dataset.image_transforms.tfs.<name>.weight "
                      "is 0: give one transform a positive weight, or leave augmentation off");
}

std::uint64_t image_seed(std::uint64_t seed, std::int64_t index, std::size_t camera) {
  std::uint64_t state = seed ^ (static_cast<std::uint64_t>(index) * 0x9E6C63D0676A9A99ull);
  state = splitmix64(state) ^ (static_cast<std::uint64_t>(camera) * 0xD6E8FEB86659FD93ull);
  return splitmix64(state);
}

std::vector<DrawnTransform> draw_transforms(const ImageTransformsConfig& c, std::uint64_t seed,
                                            std::int64_t height, std::int64_t width) {
  std::uint64_t state = seed;
  std::vector<std::size_t> pool;
  for (std::size_t k = 0; k < kNumTransformKinds; ++k)
    if (c.weights[k] > 0) pool.push_back(k);
  const auto n = std::min<std::size_t>(pool.size(), static_cast<std::size_t>(std::max<std::int64_t>(c.max_num_transforms, 0)));
  // torch.multinomial without replacement: each draw by weight among those not drawn yet.
  std::vector<std::size_t> chosen;
  for (std::size_t d = 0; d < n; ++d) {
    double total = 0;
    for (const auto k : pool) total += c.weights[k];
    double u = uniform01(state) * total;
    std::size_t pick = pool.size() - 1;
    for (std::size_t j = 0; j < pool.size(); ++j) {
      if (u < c.weights[pool[j]]) {
        pick = j;
        break;
      }
      u -= c.weights[pool[j]];
    }
    chosen.push_back(pool[pick]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  if (!c.random_order) std::sort(chosen.begin(), chosen.end());
  std::vector<DrawnTransform> out;
  for (const auto k : chosen) {
    DrawnTransform t;
    t.kind = static_cast<TransformKind>(k);
    switch (t.kind) {
      case TransformKind::Brightness: t.factor = uniform(state, c.brightness); break;
      case TransformKind::Contrast: t.factor = uniform(state, c.contrast); break;
      case TransformKind::Saturation: t.factor = uniform(state, c.saturation); break;
      case TransformKind::Hue: t.factor = uniform(state, c.hue); break;
      case TransformKind::Sharpness: t.factor = uniform(state, c.sharpness); break;
      case TransformKind::Affine: {
        // RandomAffine: an angle, then whole-pixel shifts rounded half to even as Python's round().
        t.factor = uniform(state, c.degrees);
        const double max_dx = c.translate.lo * static_cast<double>(width);
        const double max_dy = c.translate.hi * static_cast<double>(height);
        t.tx = static_cast<std::int64_t>(std::nearbyint(uniform(state, {-max_dx, max_dx})));
        t.ty = static_cast<std::int64_t>(std::nearbyint(uniform(state, {-max_dy, max_dy})));
        break;
      }
    }
    out.push_back(t);
  }
  return out;
}

at::Tensor apply_transforms(const std::vector<DrawnTransform>& transforms, const at::Tensor& image) {
  auto out = image;
  for (const auto& t : transforms) {
    switch (t.kind) {
      case TransformKind::Brightness: out = adjust_brightness(out, t.factor); break;
      case TransformKind::Contrast: out = adjust_contrast(out, t.factor); break;
      case TransformKind::Saturation: out = adjust_saturation(out, t.factor); break;
      case TransformKind::Hue: out = adjust_hue(out, t.factor); break;
      case TransformKind::Sharpness: out = adjust_sharpness(out, t.factor); break;
      case TransformKind::Affine: out = affine(out, t.factor, t.tx, t.ty); break;
    }
  }
  return out;
}

}  // namespace shardkit::lerobot
