// The one Catch2 main shared by every test executable: Catch's run, with skips counted (exit 77).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "skip.hpp"

int main(int argc, char** argv) { return shardkit::test::exit_status(Catch::Session().run(argc, argv)); }
