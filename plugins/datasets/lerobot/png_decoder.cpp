// Decoding PNG/JPEG bytes with libavcodec's still-image decoders.
#include "png_decoder.hpp"

#include <cstring>

#include <shardkit/error.hpp>

#include "av_frame.hpp"

namespace shardkit::lerobot {
namespace {

AVCodecID codec_of(const std::string& bytes) {
  static const unsigned char kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= sizeof(kPng) && std::memcmp(bytes.data(), kPng, sizeof(kPng)) == 0) return AV_CODEC_ID_PNG;
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF && static_cast<unsigned char>(bytes[1]) == 0xD8)
    return AV_CODEC_ID_MJPEG;
  return AV_CODEC_ID_NONE;
}

}  // namespace

at::Tensor decode_image(const std::string& bytes, std::int64_t height, std::int64_t width, const std::string& where) {
  const auto id = codec_of(bytes);
  if (id == AV_CODEC_ID_NONE) throw FormatError(where + " is neither PNG nor JPEG data (corrupt parquet?)");
  const AVCodec* codec = avcodec_find_decoder(id);
  if (!codec) throw FormatError(where + ": this FFmpeg has no " + avcodec_get_name(id) + " decoder");
  CodecPtr ctx(avcodec_alloc_context3(codec));
  ctx->thread_count = 1;
  if (int rc = avcodec_open2(ctx.get(), codec, nullptr); rc < 0)
    throw FormatError(where + ": cannot open the image decoder (" + av_error_text(rc) + ")");
  PacketPtr packet(av_packet_alloc());
  if (av_new_packet(packet.get(), static_cast<int>(bytes.size())) < 0) throw RuntimeError("out of memory");
  std::memcpy(packet->data, bytes.data(), bytes.size());
  FramePtr frame(av_frame_alloc());
  int rc = avcodec_send_packet(ctx.get(), packet.get());
  if (rc >= 0) rc = avcodec_send_packet(ctx.get(), nullptr);
  if (rc >= 0) rc = avcodec_receive_frame(ctx.get(), frame.get());
  if (rc < 0) throw FormatError(where + " does not decode as an image (" + av_error_text(rc) + ")");
  RgbConverter rgb;
  return rgb.convert(*frame, height, width, where);
}

}  // namespace shardkit::lerobot
