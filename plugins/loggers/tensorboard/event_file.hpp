// One TensorBoard event file: TFRecord framing (length, masked CRC-32C, data, masked CRC-32C).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace shardkit::tensorboard {

/// TFRecord's masked CRC-32C (Castagnoli) of `size` bytes at `data`.
std::uint32_t masked_crc32c(const void* data, std::size_t size);

/// Appends records to a new file; every record reaches the operating system at flush().
class EventFile {
 public:
  /// Creates `path` (an existing file is an error: files are never appended to by two runs).
  explicit EventFile(const std::string& path);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  /// Appends one record holding `data` (a serialized Event).
  void write_record(const std::string& data);
  /// Hands what was written to the operating system (a crash of this process loses nothing).
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace shardkit::tensorboard
