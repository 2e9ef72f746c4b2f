// Fuzz target for shardkit's configuration files: JSON, YAML and TOML documents (the first byte
// picks the format). No document crashes the readers, exhausts them (YAML anchors and aliases
// included) or escapes as anything but a ConfigError naming the file.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus through the same function (replay_main.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "config/config_internal.hpp"
#include "shardkit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: config_detail::parse_json_document(text, "fuzz.json"); break;
      case 1: config_detail::parse_yaml_document(text, "fuzz.yaml"); break;
      default: config_detail::parse_toml_document(text, "fuzz.toml"); break;
    }
  } catch (const ConfigError&) {
    return 0;  // refused with a message: what a bad file must get
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not a ConfigError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
