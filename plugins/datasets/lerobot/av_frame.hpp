// FFmpeg pieces shared by the image and video decoders: owned handles, error text, frames as RGB tensors.
#pragma once

#include <memory>
#include <string>

#include <ATen/ATen.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

namespace shardkit::lerobot {

struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct CodecFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFree>;

/// FFmpeg's text for error code `code`.
std::string av_error_text(int code);

/// Converts decoded frames to RGB24 tensors [height, width, 3] (uint8), keeping one scaler.
/// Scaling with SWS_BICUBIC and no SWS_ACCURATE_RND reproduces LeRobot's decoders' bytes.
class RgbConverter {
 public:
  /// `frame` as RGB; throws FormatError naming `where` when its size is not (height, width).
  at::Tensor convert(const AVFrame& frame, std::int64_t height, std::int64_t width, const std::string& where);

 private:
  SwsContext* sws_ = nullptr;
  SwsPtr owner_;
};

/// An image as LeRobot returns it: float32 [3, height, width] in [0, 1] from uint8 RGB [h, w, 3].
at::Tensor to_chw_float(const at::Tensor& rgb);

}  // namespace shardkit::lerobot
