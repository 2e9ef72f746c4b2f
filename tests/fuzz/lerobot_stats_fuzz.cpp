// Fuzz target for a LeRobot dataset's meta/stats.json: no file crashes the reader or escapes as
// anything but shardkit's errors, and every statistic it accepts has exactly as many numbers as
// its shape holds (what read_stats then reshapes into a tensor).
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus and the real datasets' stats.json files through the same function. The tensors
// themselves need LibTorch: this stops at parse_stats, the layer read_stats makes them from.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "json_file.hpp"
#include "refuse_or_abort.hpp"
#include "stats_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::lerobot;
  const std::string path = "/datasets/tiny/meta/stats.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  shardkit::fuzz::refuse_or_abort("stats.json", [&] {
    for (const auto& [feature, by_stat] : parse_stats(parse_json_text(text, path), path))
      for (const auto& [stat, values] : by_stat) {
        if (values.shape.empty()) std::abort();  // np.atleast_1d: never a 0-d tensor
        std::int64_t elements = 1;
        for (const auto d : values.shape)
          if (d < 0 || __builtin_mul_overflow(elements, d, &elements)) std::abort();
        if (elements != static_cast<std::int64_t>(values.numbers.size())) {
          std::fprintf(stderr, "%s/%s: %zu numbers for %lld elements\n", feature.c_str(), stat.c_str(),
                       values.numbers.size(), static_cast<long long>(elements));
          std::abort();  // reshape would throw c10::Error
        }
      }
  });
  return 0;
}
