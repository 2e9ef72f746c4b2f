// The build never goes ahead against a LibTorch other than 2.15.0: set-up and CMake both refuse.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "test_support.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& text, bool executable = false) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
  if (executable) ::chmod(path.c_str(), 0755);
}

// CMake wraps its messages: compare with runs of whitespace collapsed to one space.
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (space && !out.empty() && out.back() == ' ') continue;
    out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("setup.sh names the torch it found in the venv and installs the pin, never building with it",
          "[build][setup]") {
  TempDir tmp("sk-setup-venv");
  // A venv whose torch is 2.11.0 and whose pip cannot install anything (no network here):
  // setup must say what it found, try to install the pin, and stop before configuring.
  write_file(tmp / "venv/bin/python",
             "#!/bin/sh\n"
             "case \"$*\" in\n"
             "  *'-m pip'*) echo 'pip: no network in this test' >&2; exit 1 ;;\n"
             "  *torch.__version__*) echo 2.11.0+cu130 ;;\n"
             "  *) exit 0 ;;\n"
             "esac\n",
             /*executable=*/true);
  const auto r = run_command("SHARDKIT_VENV=" + shell_quote(tmp / "venv") + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/scripts/setup.sh") +
                             " " + shell_quote(tmp / "build"));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "has torch 2.11.0+cu130, not the pinned 2.15.0: installing torch==2.15.0"));
  CHECK_FALSE(fs::exists(tmp / "build/CMakeCache.txt"));
}

TEST_CASE("CMake refuses a LibTorch other than 2.15.0, naming the version and what to do",
          "[build][cmake]") {
  TempDir tmp("sk-cmake-torch");
  // The smallest package CMake takes for a LibTorch 1.13.1.
  write_file(tmp / "torch113/share/cmake/Torch/TorchConfig.cmake", "set(TORCH_FOUND TRUE)\n");
  write_file(tmp / "torch113/share/cmake/Torch/TorchConfigVersion.cmake",
             "set(PACKAGE_VERSION 1.13.1)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n");
  const auto r = run_command("cmake -S " + shell_quote(SHARDKIT_SOURCE_DIR) + " -B " +
                             shell_quote(tmp / "build") + " -DTorch_DIR=" +
                             shell_quote(tmp / "torch113/share/cmake/Torch"));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  const auto text = one_line(r.output);
  CHECK(contains(text, "shardkit needs LibTorch 2.15.0, but the LibTorch found is 1.13.1"));
  CHECK(contains(text, "scripts/setup.sh installs torch==2.15.0"));
}
