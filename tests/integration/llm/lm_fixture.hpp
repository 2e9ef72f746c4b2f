// lm_fixture.py from the language-model tests: a tiny transformers Llama with its tokenizer, and checks of saved folders.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "test_support.hpp"

namespace shardkit::test {

/// Runs `lm_fixture.py <command> <dir>` (dir shell-quoted here); fails the test, with its output,
/// unless it succeeds. Returns what it printed.
inline std::string lm_fixture(const std::string& command, const std::string& dir) {
  const auto r = run_command(python() + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/llm/lm_fixture.py") +
                             " " + command + " " + shell_quote(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return r.output;
}

}  // namespace shardkit::test
