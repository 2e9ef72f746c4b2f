// FFmpeg helpers: error text, frame -> RGB24 tensor through swscale, uint8 HWC -> float CHW.
#include "av_frame.hpp"

#include <shardkit/error.hpp>

namespace shardkit::lerobot {

std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof(text));
  return text;
}

at::Tensor RgbConverter::convert(const AVFrame& frame, std::int64_t height, std::int64_t width,
                                 const std::string& where) {
  if (frame.height != height || frame.width != width)
    throw FormatError(where + " is " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                      " pixels, but meta/info.json says " + std::to_string(width) + "x" + std::to_string(height) +
                      "; fix the shape in info.json or re-encode the camera at that size");
  sws_ = sws_getCachedContext(sws_, frame.width, frame.height, static_cast<AVPixelFormat>(frame.format), frame.width,
                              frame.height, AV_PIX_FMT_RGB24, SWS_BICUBIC, nullptr, nullptr, nullptr);
  owner_.release();
  owner_.reset(sws_);
  if (!sws_) throw FormatError(where + ": cannot convert its pixel format to RGB");
  auto rgb = at::empty({height, width, 3}, at::kByte);
  std::uint8_t* dst[4] = {rgb.data_ptr<std::uint8_t>(), nullptr, nullptr, nullptr};
  const int dst_stride[4] = {static_cast<int>(width * 3), 0, 0, 0};
  sws_scale(sws_, frame.data, frame.linesize, 0, frame.height, dst, dst_stride);
  return rgb;
}

at::Tensor to_chw_float(const at::Tensor& rgb) {
  return rgb.permute({2, 0, 1}).to(at::kFloat).div_(255).contiguous();
}

}  // namespace shardkit::lerobot
