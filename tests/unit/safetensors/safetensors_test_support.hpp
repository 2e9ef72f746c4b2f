// Helpers shared by the safetensors tests: a temporary directory and byte-level file builders.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "shardkit/error.hpp"

namespace shardkit_test {

/// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shardkit-st-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// The bytes of a file.
inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>());
}

/// Writes `bytes` to `path`.
inline void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

/// 8-byte little-endian `length` followed by `rest`.
inline std::vector<std::uint8_t> with_length(std::uint64_t length, const std::string& rest) {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(length >> (8 * i)));
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

/// A file image: the header's true length, the header, then `data_bytes` bytes of data.
inline std::vector<std::uint8_t> image(const std::string& header, std::size_t data_bytes) {
  return with_length(header.size(), header + std::string(data_bytes, '\x01'));
}

/// The message of the shardkit::FormatError `body` throws, or "" if it throws none.
inline std::string format_error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const shardkit::FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace shardkit_test
