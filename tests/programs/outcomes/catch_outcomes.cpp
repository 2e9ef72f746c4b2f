// catch_outcomes: three test cases, one per outcome, selected by tag.
#include <catch2/catch.hpp>

#include "skip.hpp"

TEST_CASE("a passing case", "[pass]") { CHECK(1 + 1 == 2); }

TEST_CASE("a failing case", "[fail]") { CHECK(1 + 1 == 3); }

TEST_CASE("a skipped case", "[skip]") { SHARDKIT_SKIP("the reason given to SHARDKIT_SKIP"); }
