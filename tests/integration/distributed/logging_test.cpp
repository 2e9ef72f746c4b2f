// What a multi-process run prints: each info line once (rank 0), one rank prefix per line,
// every rank's warnings; --log_all_ranks=true shows every rank's info lines.
#include <catch2/catch.hpp>

#include <cstddef>

#include "launch.hpp"

using namespace shardkit::test;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a 2-process run prints each info line once, with one rank prefix") {
  TempDir dir("sk-log-once");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=4", "--log_freq=2", "--batch_size=4"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(occurrences(r.output, "training done: 4 steps") == 1);
  CHECK(occurrences(r.output, "step 4/4 (100%)") == 1);
  CHECK(contains(r.output, "[rank0]: "));
  CHECK_FALSE(contains(r.output, "[rank 0]"));  // the launcher's prefix only, not the logger's too
  CHECK_FALSE(contains(r.output, "[rank1]: 20"));  // no log line of rank 1 (they start with the date)
}

TEST_CASE("--log_all_ranks=true prints every rank's info lines") {
  TempDir dir("sk-log-all");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=4", "--log_freq=2", "--batch_size=4", "--log_all_ranks=true"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(occurrences(r.output, "training done: 4 steps") == 2);
  CHECK(contains(r.output, "[rank1]: "));
}

TEST_CASE("every rank still prints its warnings") {
  TempDir dir("sk-log-warn");
  // A resume with another per-process batch size warns on every rank.
  REQUIRE(launch(2, tiny_run(dir / "run", {"--steps=4", "--batch_size=4", "--save_freq=4"})).exit_code == 0);
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=8", "--batch_size=2", "--resume=true"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "[rank0]: "));
  CHECK(occurrences(r.output, "but the checkpoint was written with batch_size") == 2);
}
