// The one Catch2 main shared by every test executable: Catch's run, with skips counted (exit 77),
// and a test case that ran no assertion at all counted as a failure: a test that checks nothing
// (e.g. because a LibTorch header included after Catch's replaced its CHECK with LibTorch's own)
// must never count as passed. A case that skips (SHARDKIT_SKIP) records a passing assertion.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "skip.hpp"

namespace {

std::vector<std::string>& cases_without_assertions() {
  static std::vector<std::string> names;
  return names;
}

/// Notes each test case that ran to its end without a single assertion.
struct AssertionCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    if (stats.totals.assertions.total() == 0) cases_without_assertions().push_back(stats.testInfo.name);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(AssertionCounter)

int main(int argc, char** argv) {
  Catch::Session session;
  if (const int status = session.applyCommandLine(argc, argv); status != 0) return status;
  const auto& config = session.configData();
  // A listing returns how many things it listed: not a failure count.
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  const int result = session.run();
  if (listing) return 0;
  for (const auto& name : cases_without_assertions())
    std::cout << "FAILED: test case \"" << name << "\" ran no assertion: a test must check something "
              << "(if it has CHECKs, include LibTorch and project headers before catch.hpp)" << std::endl;
  return shardkit::test::exit_status(cases_without_assertions().empty() ? result : result + 1);
}
