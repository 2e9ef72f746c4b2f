// Fuzz target for the safetensors reader: no file image crashes it or makes it allocate what the
// image does not hold; what it accepts serializes back to a file it reads the same.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus through the same function (replay_main.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "shardkit/error.hpp"
#include "shardkit/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::safetensors;
  std::vector<TensorRef> refs;
  try {
    const auto file = File::from_bytes(std::vector<std::uint8_t>(data, data + size), "fuzz.safetensors");
    for (const auto& name : file.names()) {
      const auto& view = file.get(name);
      std::size_t elements = 1;
      for (const auto d : view.shape) elements *= static_cast<std::size_t>(d);
      // Its size is what its shape and dtype say (and its bytes, read below in the round trip,
      // lie inside the image: AddressSanitizer checks every one).
      if (view.nbytes != elements * dtype_size(view.dtype) || view.nbytes > size) {
        std::fprintf(stderr, "tensor '%s' is not what its header says\n", name.c_str());
        std::abort();
      }
      refs.push_back({name, view.dtype, view.shape, view.data, view.nbytes});
    }
    // Whatever is accepted writes back to an image that reads the same names, shapes and bytes.
    const auto bytes = serialize(refs, file.metadata());
    const auto again = File::from_bytes(bytes, "rewritten.safetensors");
    if (again.names().size() != file.names().size()) std::abort();
    for (const auto& name : file.names()) {
      const auto& a = file.get(name);
      const auto& b = again.get(name);
      if (a.shape != b.shape || a.dtype != b.dtype || a.nbytes != b.nbytes ||
          (a.nbytes > 0 && std::string(reinterpret_cast<const char*>(a.data), a.nbytes) !=
                               std::string(reinterpret_cast<const char*>(b.data), b.nbytes))) {
        std::fprintf(stderr, "tensor '%s' changed in a round trip\n", name.c_str());
        std::abort();
      }
    }
  } catch (const shardkit::FormatError&) {
    return 0;  // refused with a message: what malformed input must get
  }
  return 0;
}
