// Decoding video frames by timestamp: seek to the keyframe before, decode forward, match within tolerance.
#include "video_reader.hpp"

#include <cmath>
#include <filesystem>
#include <mutex>

#include <shardkit/error.hpp>

namespace shardkit::lerobot {
namespace {
// Requests up to this far after the decoder's position decode forward instead of seeking.
constexpr double kForwardWindowS = 1.0;
}  // namespace

VideoReader::VideoReader(const std::string& path) : path_(path), packet_(av_packet_alloc()), frame_(av_frame_alloc()) {
  // FFmpeg's own notices (decoder banners) would interleave with the training log; its
  // failures reach the user through this reader's exceptions.
  static std::once_flag quiet;
  std::call_once(quiet, [] { av_log_set_level(AV_LOG_ERROR); });
  if (!std::filesystem::exists(path))
    throw FormatError("missing video " + path + ": the episodes table names it; the dataset is incomplete, "
                      "re-download it");
  if (int rc = avformat_open_input(&format_, path.c_str(), nullptr, nullptr); rc < 0)
    throw FormatError("cannot open the video " + path + " (" + av_error_text(rc) +
                      "; truncated or corrupt? re-download the dataset)");
  if (int rc = avformat_find_stream_info(format_, nullptr); rc < 0)
    throw FormatError("cannot read the streams of " + path + " (" + av_error_text(rc) + ")");
  const AVCodec* codec = nullptr;
  stream_ = av_find_best_stream(format_, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (stream_ < 0 || !codec)
    throw FormatError(path + " has no video stream this FFmpeg decodes (" + av_error_text(stream_) +
                      "; AV1 needs libdav1d: Debian's libavcodec59 has it)");
  const auto* stream = format_->streams[stream_];
  time_base_ = av_q2d(stream->time_base);
  codec_.reset(avcodec_alloc_context3(codec));
  avcodec_parameters_to_context(codec_.get(), stream->codecpar);
  codec_->thread_count = 1;  // the loader parallelises over samples
  if (int rc = avcodec_open2(codec_.get(), codec, nullptr); rc < 0)
    throw FormatError("cannot open the " + std::string(codec->name) + " decoder for " + path + " (" +
                      av_error_text(rc) + ")");
}

VideoReader::~VideoReader() { avformat_close_input(&format_); }

FormatError VideoReader::decode_error(int code) const {
  return FormatError("cannot decode " + path_ + " (" + av_error_text(code) +
                     "; truncated or corrupt? re-download the dataset)");
}

void VideoReader::seek(double time) {
  ++seeks_;
  const auto target = static_cast<std::int64_t>(std::floor(time / time_base_));
  if (int rc = av_seek_frame(format_, stream_, target, AVSEEK_FLAG_BACKWARD); rc < 0)
    throw FormatError("cannot seek to " + std::to_string(time) + " s in " + path_ + " (" + av_error_text(rc) + ")");
  avcodec_flush_buffers(codec_.get());
  have_frame_ = false;
  input_done_ = false;
}

bool VideoReader::decode_next() {
  for (;;) {
    int rc = avcodec_receive_frame(codec_.get(), frame_.get());
    if (rc == 0) {
      frame_time_ = static_cast<double>(frame_->best_effort_timestamp) * time_base_;
      have_frame_ = true;
      return true;
    }
    if (rc == AVERROR_EOF) return false;
    if (rc != AVERROR(EAGAIN)) throw decode_error(rc);
    if (input_done_) return false;
    rc = av_read_frame(format_, packet_.get());
    if (rc == AVERROR_EOF) {
      input_done_ = true;
      avcodec_send_packet(codec_.get(), nullptr);  // drain the decoder
      continue;
    }
    if (rc < 0) throw FormatError("cannot read " + path_ + " (" + av_error_text(rc) + "; truncated?)");
    if (packet_->stream_index == stream_) rc = avcodec_send_packet(codec_.get(), packet_.get());
    av_packet_unref(packet_.get());
    if (rc < 0 && rc != AVERROR(EAGAIN))
      throw decode_error(rc);
  }
}

at::Tensor VideoReader::frame_at(double time, double tolerance_s, std::int64_t height, std::int64_t width,
                                 const std::string& what) {
  if (!have_frame_ || time < frame_time_ - tolerance_s || time > frame_time_ + kForwardWindowS)
    seek(time - tolerance_s);
  while (!have_frame_ || frame_time_ < time - tolerance_s) {
    if (!decode_next())
      throw FormatError(path_ + " ends before " + what + " at " + std::to_string(time) +
                        " s: the video is shorter than the episodes table says (truncated? re-download the dataset)");
  }
  if (frame_time_ > time + tolerance_s)
    throw FormatError(path_ + " has no frame within " + std::to_string(tolerance_s) + " s of " + what + " at " +
                      std::to_string(time) + " s (the nearest after it is at " + std::to_string(frame_time_) +
                      " s); the video and the data parquet disagree, or raise --dataset.tolerance_s");
  return rgb_.convert(*frame_, height, width, path_ + " (" + what + ")");
}

std::unique_ptr<VideoReader> VideoReaderPool::take(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = idle_.find(path);
    if (it != idle_.end()) {
      auto reader = std::move(it->second);
      idle_.erase(it);
      return reader;
    }
  }
  return std::make_unique<VideoReader>(path);
}

void VideoReaderPool::give_back(const std::string& path, std::unique_ptr<VideoReader> reader) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.emplace(path, std::move(reader));
}

}  // namespace shardkit::lerobot
