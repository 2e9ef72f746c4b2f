// Fuzz target for the DCP .metadata reader: no input crashes it, and what it accepts writes back stably.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan; `scripts/fuzz.sh 60 dcp_metadata`).
// The test suite replays the committed corpus through the same function (replay_main.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shardkit/dcp/metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::dcp;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Metadata metadata;
  try {
    metadata = read_metadata(input, "fuzz input");
  } catch (const MetadataError&) {
    return 0;  // refused with a message: what malformed input must get
  }
  // Whatever the reader accepts, the writer writes, and a second round trip changes nothing.
  const std::string once = write_metadata(metadata);
  const std::string twice = write_metadata(read_metadata(once, "rewritten"));
  if (once != twice) {
    std::fprintf(stderr, "write_metadata(read_metadata(x)) is not stable\n");
    std::abort();
  }
  return 0;
}
