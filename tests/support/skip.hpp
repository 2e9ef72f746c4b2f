// Skipping a test case visibly (Catch2 v2 has no SKIP): the reason is printed, counted, and turns
// the executable's exit status into 77, which CTest reports as a skip, never as a pass.
#pragma once

#include <sstream>
#include <string>

namespace shardkit::test {

/// The exit status CTest reads as "skipped" (SKIP_RETURN_CODE on every test).
constexpr int kSkipExitCode = 77;

/// Records that `test_case` (at `file`:`line`) did not run because of `reason`: prints
/// "skipped: ...", and appends "<executable>\t<test case>\t<reason>" to the file named by
/// $SHARDKIT_SKIP_LOG when it is set (scripts/run-tests.sh reads it). Use SHARDKIT_SKIP.
void record_skip(const std::string& test_case, const char* file, int line, const std::string& reason);

/// For a main() that cannot run any of its test cases: records `reason` for the whole
/// executable and returns kSkipExitCode.
int skip_executable(const std::string& reason);

/// The exit status of a test executable from Catch's (the failed-assertion count): 1 when
/// anything failed (a count of 77 must not read as a skip), else kSkipExitCode when a test case
/// skipped (after a summary of the reasons), else 0.
int exit_status(int catch_result);

}  // namespace shardkit::test

/// Ends the current test case as skipped; `reason` is streamed like WARN's message. Use it at
/// the top level of a TEST_CASE (or SECTION) body: it returns from the enclosing function, so
/// inside a helper or lambda it would only end that. Needs <catch2/catch.hpp> (for the name).
#define SHARDKIT_SKIP(reason)                                                                 \
  do {                                                                                        \
    std::ostringstream shardkit_skip_reason_;                                                 \
    shardkit_skip_reason_ << reason;                                                          \
    ::shardkit::test::record_skip(::Catch::getResultCapture().getCurrentTestName(), __FILE__, \
                                  __LINE__, shardkit_skip_reason_.str());                     \
    return;                                                                                   \
  } while (0)
