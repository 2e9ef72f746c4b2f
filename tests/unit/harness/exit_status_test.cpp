// The shared Catch main's exit statuses, which CTest reads: 0 for a pass, 1 for any failure
// (even beside a skip), 77 (SKIP_RETURN_CODE) when a case skipped and none failed, and 0 for a
// listing of the tests.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

using shardkit::test::contains;
using shardkit::test::run_command;
using shardkit::test::shell_quote;

namespace {

shardkit::test::ProcessResult outcomes(const std::vector<std::string>& args) {
  // Without SHARDKIT_SKIP_LOG: the deliberate skip must not reach the suite's list of skips.
  const std::string program = std::string(SHARDKIT_TEST_PROGRAM_DIR) + "/catch_outcomes";
  std::string command = "env -u SHARDKIT_SKIP_LOG " + shell_quote(program);
  for (const auto& arg : args) command += " " + shell_quote(arg);
  return run_command(command);
}

}  // namespace

TEST_CASE("the test main exits 0, 1 or 77 as CTest expects, and 0 for a listing", "[harness]") {
  CHECK(outcomes({"[pass]"}).exit_code == 0);
  CHECK(outcomes({"[fail]"}).exit_code == 1);
  const auto skipped = outcomes({"[skip]"});
  INFO(skipped.output);
  CHECK(skipped.exit_code == 77);
  CHECK(contains(skipped.output, "the reason given to SHARDKIT_SKIP"));
  CHECK(outcomes({"[pass],[skip]"}).exit_code == 77);
  CHECK(outcomes({"[fail],[skip]"}).exit_code == 1);
  CHECK(outcomes({"--list-tests"}).exit_code == 0);
  CHECK(outcomes({"--list-test-names-only"}).exit_code == 0);
  CHECK(outcomes({"[nosuchtag]"}).exit_code == 0);  // Catch runs nothing and fails nothing...
  CHECK(outcomes({"[nosuchtag]", "-w", "NoTests"}).exit_code == 1);  // ...unless told to (a renamed tag)
}
