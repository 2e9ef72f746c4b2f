// Fuzz target for the tokenizer.json reader: no file crashes it, makes it allocate what the file
// does not describe, or escapes as anything but shardkit's own errors; what it accepts encodes
// and decodes a fixed text.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus through the same function (replay_main.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "shardkit/error.hpp"
#include "tokenizer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shardkit::text::Tokenizer;
  const std::string json(reinterpret_cast<const char*>(data), size);
  try {
    const auto tokenizer = Tokenizer::from_json(json, "fuzz/tokenizer.json");
    const auto ids = tokenizer->encode("Hello, wörld! 12 345\n\tthe end <s>", true);
    (void)tokenizer->decode(ids, false);
    (void)tokenizer->decode(ids, true);
  } catch (const shardkit::Error&) {
    return 0;  // refused (or a text it cannot encode) with a message: what bad input must get
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not a shardkit error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
