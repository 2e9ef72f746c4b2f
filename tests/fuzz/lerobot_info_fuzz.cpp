// Fuzz target for a LeRobot dataset's meta/info.json: no file crashes the reader, sizes anything
// by a shape it does not bound, or escapes as anything but shardkit's errors; what it accepts
// fills its path templates and gives every feature's sample shape.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus and the real datasets' info.json files through the same function.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dataset_info.hpp"
#include "refuse_or_abort.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::lerobot;
  const std::string text(reinterpret_cast<const char*>(data), size);
  shardkit::fuzz::refuse_or_abort("info.json", [&] {
    const auto info = parse_dataset_info(text, "/datasets/tiny", "/datasets/tiny/meta/info.json");
    (void)info.data_file(0, 12);
    for (const auto* camera : info.cameras()) (void)info.video_file(camera->name, 3, 0);
    for (const auto& feature : info.features) {
      std::int64_t elements = 1;
      for (const auto d : feature.sample_shape()) elements *= d;  // bounded: no overflow (UBSan checks)
      if (elements > kMaxSampleElements) std::abort();
    }
  });
  return 0;
}
