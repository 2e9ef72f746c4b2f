// Fuzz target for the DCP .metadata reader: no input crashes it, and what it accepts writes back stably.
//
// libFuzzer (Debian: clang-14 libclang-rt-14-dev), from the source tree (error.cpp needs the
// LibTorch headers only for declarations; T = the venv's torch/include):
//   clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Icore/include -Icheckpoint_formats/dcp_common/include -Icore/src \
//     -isystem $T -isystem $T/torch/csrc/api/include tests/fuzz/dcp_metadata_fuzz.cpp \
//     checkpoint_formats/dcp_common/metadata*.cpp checkpoint_formats/dcp_common/pickle_*.cpp core/src/common/error.cpp -o dcp_metadata_fuzz
//   ./dcp_metadata_fuzz -max_len=16384 tests/fuzz/dcp_metadata_corpus tests/fixtures/dcp
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
