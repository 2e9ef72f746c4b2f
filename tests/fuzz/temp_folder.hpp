// A folder of the fuzz process's own under the system's temporary folder, for readers that take a path.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace shardkit::fuzz {

/// The process's folder, made (mkdtemp, in TMPDIR or /tmp) on first use and removed at exit;
/// nothing a harness writes goes anywhere else.
inline const std::filesystem::path& temp_folder() {
  struct Folder {
    std::filesystem::path path;
    Folder() {
      auto pattern = (std::filesystem::temp_directory_path() / "shardkit-fuzz-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) std::abort();
      path = pattern;
    }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder;
  return folder.path;
}

/// Writes `bytes` to `relative` (a path inside temp_folder(), its folders made) and returns its path.
inline std::string write_temp_file(const std::string& relative, std::string_view bytes) {
  const auto path = temp_folder() / relative;
  std::filesystem::create_directories(path.parent_path());
  // A new file each time: ext4 flushes a file truncated over its data (auto_da_alloc), ~1 ms.
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

}  // namespace shardkit::fuzz
