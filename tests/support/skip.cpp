// The skip record behind SHARDKIT_SKIP, and the exit status that makes CTest count the skips.
#include "skip.hpp"

#include <errno.h>  // program_invocation_short_name
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace shardkit::test {
namespace {

struct Skip {
  std::string test_case;
  std::string reason;
};

std::vector<Skip>& skips() {
  static std::vector<Skip> all;
  return all;
}

/// One line per skip in the log: reasons that quote a command's output lose their breaks and tabs.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

void record(const std::string& test_case, const std::string& reason) {
  skips().push_back({test_case, reason});
  const char* log = std::getenv("SHARDKIT_SKIP_LOG");
  if (!log || !*log) return;
  // O_APPEND and one write per line: ctest runs executables in parallel into the same file.
  const std::string line =
      std::string(program_invocation_short_name) + "\t" + test_case + "\t" + reason + "\n";
  const int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::cerr << "cannot append to SHARDKIT_SKIP_LOG=" << log << ": this skip is not counted there"
              << std::endl;
    return;
  }
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    std::cerr << "short write to SHARDKIT_SKIP_LOG=" << log << std::endl;
  ::close(fd);
}

}  // namespace

void record_skip(const std::string& test_case, const char* file, int line, const std::string& reason) {
  const auto text = one_line(reason);
  // A skip is what the test case did: it counts as a (passing) assertion, so that catch_main.cpp's
  // check for cases without assertions does not fail it; the exit status still says "skipped".
  SUCCEED("skipped: " << text);
  std::cout << "skipped: " << text << " (\"" << test_case << "\", " << file << ":" << line << ")"
            << std::endl;
  record(test_case, text);
}

int skip_executable(const std::string& reason) {
  const auto text = one_line(reason);
  std::cout << "skipped: " << text << std::endl;
  record("(every test case)", text);
  return kSkipExitCode;
}

int exit_status(int catch_result) {
  if (catch_result != 0) return 1;
  if (skips().empty()) return 0;
  // The cases that ran passed, but the executable as a whole did not: CTest shows it skipped, and
  // the list below (and scripts/run-tests.sh's summary) says which cases did not run.
  std::cout << "skipped " << skips().size() << " test case(s), and none failed:\n";
  for (const auto& s : skips()) std::cout << "  \"" << s.test_case << "\": " << s.reason << "\n";
  std::cout << std::flush;
  return kSkipExitCode;
}

}  // namespace shardkit::test
