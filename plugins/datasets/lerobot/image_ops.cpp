// torchvision's colour and affine ops in LibTorch: same operations in the same order, for float32 agreement.
#include "image_ops.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include <shardkit/error.hpp>

namespace shardkit::lerobot {
namespace {

void check_channels(const at::Tensor& image, const char* op) {
  if (image.dim() < 3 || (image.size(-3) != 1 && image.size(-3) != 3))
    throw RuntimeError(std::string(op) + " takes images shaped [..., 1 or 3, H, W], not " +
                       std::to_string(image.dim()) + "-dimensional ones with " +
                       (image.dim() >= 3 ? std::to_string(image.size(-3)) : std::string("no")) + " channels");
}

/// image1 * ratio + image2 * (1 - ratio), clamped to [0, 1] (the (1 - ratio) is taken in double).
at::Tensor blend(const at::Tensor& image1, const at::Tensor& image2, double ratio) {
  return image1.mul(ratio).add_(image2, 1.0 - ratio).clamp_(0, 1);
}

/// The [..., 1, H, W] luma of RGB images.
at::Tensor grayscale(const at::Tensor& image) {
  const auto rgb = image.unbind(-3);
  return rgb[0].mul(0.2989).add_(rgb[1], 0.587).add_(rgb[2], 0.114).unsqueeze(-3);
}

at::Tensor rgb_to_hsv(const at::Tensor& image) {
  const auto channels = image.unbind(-3);
  const auto& r = channels[0];
  const auto& g = channels[1];
  auto [minc, maxc] = at::aminmax(image, -3);
  // Where max == min, S and H are set to 0 without dividing by zero.
  const auto eqc = maxc == minc;
  const auto range = maxc - minc;
  const auto ones = at::ones_like(maxc);
  auto s = range / at::where(eqc, ones, maxc);
  const auto divisor = at::where(eqc, ones, range).unsqueeze_(-3);
  auto rgbc = ((maxc.unsqueeze(-3) - image) / divisor).unbind(-3);
  auto rc = rgbc[0], gc = rgbc[1], bc = rgbc[2];
  auto maxc_neq_r = maxc != r;
  auto maxc_eq_g = maxc == g;
  // In place, in this order: hg reads bc before hr overwrites it, hr reads gc before hb does.
  auto hg = rc.add(2.0).sub_(bc).mul_(maxc_eq_g & maxc_neq_r);
  auto hr = bc.sub_(gc).mul_(maxc_neq_r.logical_not());
  auto hb = gc.add_(4.0).sub_(rc).mul_(maxc_neq_r.logical_and_(maxc_eq_g.logical_not_()));
  auto h = hr.add_(hg).add_(hb);
  h = h.mul_(1.0 / 6.0).add_(1.0).fmod_(1.0);
  return at::stack({h, s, maxc}, -3);
}

at::Tensor hsv_to_rgb(const at::Tensor& hsv) {
  const auto channels = hsv.unbind(-3);
  const auto& h = channels[0];
  const auto& s = channels[1];
  const auto& v = channels[2];
  auto h6 = h.mul(6);
  auto i = at::floor(h6);
  auto f = h6.sub_(i);
  i = i.to(at::kInt);
  auto sxf = s * f;
  auto one_minus_s = at::rsub(s, 1.0);
  auto q = at::rsub(sxf, 1.0).mul_(v).clamp_(0.0, 1.0);
  auto t = sxf.add_(one_minus_s).mul_(v).clamp_(0.0, 1.0);
  auto p = one_minus_s.mul_(v).clamp_(0.0, 1.0);
  i.remainder_(6);
  const auto vpqt = at::stack({v, p, q, t}, -3);
  // Which of v, p, q, t each of R, G, B takes, by the sector i of the hue.
  static const std::vector<std::int64_t> kSelect = {0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2};
  const auto table = at::tensor(kSelect, at::kLong).view({3, 6});
  std::vector<std::int64_t> shape = {3};
  for (const auto d : i.sizes()) shape.push_back(d);
  auto select = table.index_select(1, i.reshape({-1}).to(at::kLong)).view(shape);
  if (select.dim() > 3) select = select.movedim(0, -3);
  return vpqt.gather(-3, select);
}

/// torchvision's _get_inverse_affine_matrix for centre (0, 0), scale 1, no shear: output
/// pixel -> input pixel, in coordinates relative to the image centre.
std::vector<double> inverse_affine_matrix(double degrees, double tx, double ty) {
  const double rot = degrees * (std::numbers::pi / 180.0);
  const double sx = 0.0, sy = 0.0, scale = 1.0, cx = 0.0, cy = 0.0;
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx);
  const double a = std::cos(rot - sy) / cos_sy;
  const double b = -(a * tan_sx + std::sin(rot));
  const double c = std::sin(rot - sy) / cos_sy;
  const double d = std::cos(rot) - c * tan_sx;
  std::vector<double> m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] += cx - m[0] * (cx + tx) - m[1] * (cy + ty);
  m[5] += cy - m[3] * (cx + tx) - m[4] * (cy + ty);
  return m;
}

/// grid_sample's [1, H, W, 2] sampling grid for the inverse matrix `m` (torchvision's _affine_grid).
at::Tensor affine_grid(const std::vector<double>& m, std::int64_t w, std::int64_t h) {
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const auto theta = at::tensor(m, at::kDouble).to(at::kFloat).reshape({1, 2, 3});
  auto base = at::empty({1, h, w, 3}, options);
  base.select(-1, 0).copy_(at::linspace((1.0 - static_cast<double>(w)) * 0.5, (static_cast<double>(w) - 1.0) * 0.5, w, options));
  base.select(-1, 1).copy_(
      at::linspace((1.0 - static_cast<double>(h)) * 0.5, (static_cast<double>(h) - 1.0) * 0.5, h, options).unsqueeze_(-1));
  base.select(-1, 2).fill_(1);
  const auto scale = at::tensor(std::vector<float>{0.5f * static_cast<float>(w), 0.5f * static_cast<float>(h)}, at::kFloat);
  const auto rescaled = theta.transpose(1, 2).div_(scale);
  return base.view({1, h * w, 3}).bmm(rescaled).view({1, h, w, 2});
}

}  // namespace

at::Tensor adjust_brightness(const at::Tensor& image, double factor) {
  check_channels(image, "adjust_brightness");
  return image.mul(factor).clamp_(0, 1);
}

at::Tensor adjust_contrast(const at::Tensor& image, double factor) {
  check_channels(image, "adjust_contrast");
  const auto gray = image.size(-3) == 3 ? grayscale(image) : image;
  return blend(image, at::mean(gray, {-3, -2, -1}, /*keepdim=*/true), factor);
}

at::Tensor adjust_saturation(const at::Tensor& image, double factor) {
  check_channels(image, "adjust_saturation");
  if (image.size(-3) == 1) return image.clone();
  return blend(image, grayscale(image), factor);
}

at::Tensor adjust_hue(const at::Tensor& image, double factor) {
  check_channels(image, "adjust_hue");
  if (factor < -0.5 || factor > 0.5) throw RuntimeError("adjust_hue: the hue factor " + std::to_string(factor) + " is outside [-0.5, 0.5]");
  if (image.size(-3) == 1 || image.numel() == 0) return image.clone();
  auto hsv = rgb_to_hsv(image);
  auto parts = hsv.unbind(-3);
  parts[0].add_(factor).remainder_(1.0);
  return hsv_to_rgb(at::stack({parts[0], parts[1], parts[2]}, -3));
}

at::Tensor adjust_sharpness(const at::Tensor& image, double factor) {
  check_channels(image, "adjust_sharpness");
  const auto channels = image.size(-3), height = image.size(-2), width = image.size(-1);
  if (image.numel() == 0 || height <= 2 || width <= 2) return image.clone();
  const auto shape = image.sizes().vec();
  auto output = image.reshape({-1, channels, height, width}).clone();
  const auto a = static_cast<float>(1.0 / 13.0), b = static_cast<float>(5.0 / 13.0);
  const auto kernel = at::tensor(std::vector<float>{a, a, a, a, b, a, a, a, a}, at::kFloat)
                          .view({3, 3})
                          .expand({channels, 1, 3, 3});
  const std::vector<std::int64_t> one = {1}, zero = {0};
  auto blurred = at::conv2d(output, kernel, std::nullopt, /*stride=*/one, /*padding=*/zero, /*dilation=*/one, channels);
  auto inner = output.narrow(-2, 1, height - 2).narrow(-1, 1, width - 2);
  inner.add_(blurred.sub_(inner), 1.0 - factor);
  return output.clamp_(0, 1).reshape(shape);
}

at::Tensor affine(const at::Tensor& image, double degrees, std::int64_t tx, std::int64_t ty) {
  check_channels(image, "affine");
  const auto channels = image.size(-3), height = image.size(-2), width = image.size(-1);
  if (image.numel() == 0) return image.clone();
  const auto shape = image.sizes().vec();
  const auto flat = image.reshape({-1, channels, height, width});
  auto grid = affine_grid(inverse_affine_matrix(degrees, static_cast<double>(tx), static_cast<double>(ty)), width, height);
  grid = grid.expand({flat.size(0), height, width, 2});
  // Nearest sampling with zeros outside: the same pixels as torchvision's fill=0 mask.
  return at::grid_sampler(flat, grid, /*interpolation_mode=nearest*/ 1, /*padding_mode=zeros*/ 0,
                          /*align_corners=*/false)
      .reshape(shape);
}

}  // namespace shardkit::lerobot
