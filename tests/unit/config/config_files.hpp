// Temporary configuration files for the config tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit::config_test {

// A file in a fresh temporary folder, removed with the object (one counter for every test file).
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("shardkit-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / name).string();
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

inline std::string load_error(const std::string& path) {
  try {
    shardkit::load_config_file(path);
  } catch (const shardkit::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace shardkit::config_test

using shardkit::config_test::TempFile;
using shardkit::config_test::load_error;
