// Still images stored in the data parquet (LeRobot writes PNG) decoded with FFmpeg.
#pragma once

#include <string>

#include <ATen/ATen.h>

namespace shardkit::lerobot {

/// Decodes PNG (or JPEG) `bytes` to uint8 RGB [height, width, 3]. Throws FormatError naming
/// `where` for bytes that do not decode or an image of another size.
at::Tensor decode_image(const std::string& bytes, std::int64_t height, std::int64_t width, const std::string& where);

}  // namespace shardkit::lerobot
