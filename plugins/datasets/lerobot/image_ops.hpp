// torchvision's functional colour and geometry ops on float images in [0, 1], reimplemented with LibTorch.
#pragma once

#include <ATen/ATen.h>

namespace shardkit::lerobot {

// Each op takes float32 images shaped [..., C, H, W] (C 1 or 3, any leading dimensions, e.g.
// the stacked frames of one camera), treats every image alike, and returns new images in
// [0, 1] computed with the same tensor operations, in the same order, as torchvision's
// transforms.v2.functional op of the same name, so results agree to float32 rounding.

/// adjust_brightness: image * factor, clamped.
at::Tensor adjust_brightness(const at::Tensor& image, double factor);
/// adjust_contrast: a blend with each image's mean grayscale value (0.2989 R + 0.587 G + 0.114 B).
at::Tensor adjust_contrast(const at::Tensor& image, double factor);
/// adjust_saturation: a blend with the grayscale image (single-channel images are returned as is).
at::Tensor adjust_saturation(const at::Tensor& image, double factor);
/// adjust_hue: hue shifted by `factor` (in [-0.5, 0.5]) through RGB -> HSV -> RGB.
at::Tensor adjust_hue(const at::Tensor& image, double factor);
/// adjust_sharpness: a blend with the image smoothed by a 3x3 kernel (1s around a 5, over 13);
/// the one-pixel border keeps its values.
at::Tensor adjust_sharpness(const at::Tensor& image, double factor);
/// affine with angle `degrees` about the centre, an integer translation (tx, ty) in pixels,
/// scale 1, no shear, nearest-neighbour sampling and fill 0 outside the image.
at::Tensor affine(const at::Tensor& image, double degrees, std::int64_t tx, std::int64_t ty);

}  // namespace shardkit::lerobot
