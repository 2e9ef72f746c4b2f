// Frames of an mp4 by timestamp (FFmpeg; AV1 via libdav1d, H.264, HEVC), reusing the open decoder.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <ATen/ATen.h>

#include <shardkit/error.hpp>

#include "av_frame.hpp"

namespace shardkit::lerobot {

/// One open video file. Not thread-safe: one thread uses a reader at a time (VideoReaderPool).
class VideoReader {
 public:
  /// Opens `path`; throws FormatError naming it when it is missing, truncated or has no
  /// decodable video stream.
  explicit VideoReader(const std::string& path);
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  /// The frame whose time (pts x time base, seconds) is within `tolerance_s` of `time`, as
  /// uint8 RGB [height, width, 3]. A request at or shortly after the previous one decodes
  /// forward from where the decoder stands; others seek to the keyframe before `time`.
  /// Throws FormatError naming the file and `what` (episode, frame) when no frame matches
  /// or the file ends first.
  at::Tensor frame_at(double time, double tolerance_s, std::int64_t height, std::int64_t width,
                      const std::string& what);

  /// How many times the reader seeked (for tests of sequential reuse).
  std::int64_t seeks() const { return seeks_; }

 private:
  void seek(double time);
  bool decode_next();
  FormatError decode_error(int code) const;
  std::string path_;
  AVFormatContext* format_ = nullptr;
  CodecPtr codec_;
  int stream_ = -1;
  double time_base_ = 0;
  PacketPtr packet_;
  FramePtr frame_;
  bool have_frame_ = false, input_done_ = false;
  double frame_time_ = 0;
  std::int64_t seeks_ = 0;
  RgbConverter rgb_;
};

/// Open readers shared by the loader's threads: a thread takes one for a file, uses it,
/// gives it back; sequential requests then find the decoder where they left it.
class VideoReaderPool {
 public:
  std::unique_ptr<VideoReader> take(const std::string& path);
  void give_back(const std::string& path, std::unique_ptr<VideoReader> reader);

 private:
  std::mutex mutex_;
  std::multimap<std::string, std::unique_ptr<VideoReader>> idle_;
};

}  // namespace shardkit::lerobot
