// Fuzz target for what shardkit-run reads that its workers wrote: a failed worker's error file
// (TORCHELASTIC_ERROR_FILE, torchrun's JSON or anything else) and a worker's output, split into
// the lines it relays and keeps for the failure report. Neither crashes, throws or keeps more
// than it promises (a message of at most 4000 characters, the last 20 lines, none with a newline).
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus through the same function. The rendezvous parses no bytes of its own (the
// store protocol is LibTorch's TCPStore; the launcher compares and shows its values as text).
// The error file lies under the process's temporary folder; the relayed lines go to /dev/null.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "error_file.hpp"
#include "rank_output.hpp"
#include "shardkit/error.hpp"
#include "temp_folder.hpp"

namespace {

/// Standard output pointed at /dev/null while it lives: RankOutput relays every line there
/// (the replay's own report, written after, still shows).
class QuietStdout {
 public:
  QuietStdout() : saved_(::dup(STDOUT_FILENO)) {
    std::fflush(stdout);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    ::dup2(null, STDOUT_FILENO);
    ::close(null);
  }
  ~QuietStdout() {
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  QuietStdout(const QuietStdout&) = delete;
  QuietStdout& operator=(const QuietStdout&) = delete;

 private:
  int saved_;
};

void fail(const char* what) {
  std::fprintf(stderr, "%s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::run;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto message = read_error_message(shardkit::fuzz::write_temp_file("attempt_0/3/error.json", bytes));
    if (message.size() > 4000 + 3) fail("the error message is longer than 4000 characters and '...'");
    const std::string blank = " \t\r\n";
    if (!message.empty() && (blank.find(message.front()) != std::string::npos ||
                             blank.find(message.back()) != std::string::npos))
      fail("the error message is not trimmed");

    // How the output arrives: the first byte picks the read() sizes (1 to 128 bytes), the last
    // how many times the whole of it repeats (1 to 16: a line longer than 64 KiB goes in pieces).
    const std::size_t piece = size ? 1 + data[0] % 128 : 1;
    const int repeats = size ? 1 + data[size - 1] % 16 : 1;
    QuietStdout quiet;
    RankOutput output(3, "");
    for (int r = 0; r < repeats; ++r)
      for (std::size_t at = 0; at < size; at += piece)
        output.feed(Stream::Out, bytes.data() + at, std::min(piece, size - at));
    output.finish(Stream::Out);
    if (output.last_lines().size() > 20) fail("more than the last 20 lines kept");
    for (const auto& line : output.last_lines())
      if (line.find('\n') != std::string::npos) fail("a kept line holds a newline");
  } catch (const shardkit::Error& e) {
    std::fprintf(stderr, "shardkit error from a reader that never throws: %s\n", e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "not a shardkit error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
