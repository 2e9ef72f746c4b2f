// The one Catch2 main shared by every test executable: Catch's run, with skips counted (exit 77).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "skip.hpp"

int main(int argc, char** argv) {
  Catch::Session session;
  if (const int status = session.applyCommandLine(argc, argv); status != 0) return status;
  const auto& config = session.configData();
  // A listing returns how many things it listed: not a failure count.
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  const int result = session.run();
  return listing ? 0 : shardkit::test::exit_status(result);
}
