// lm_fixture.py from the language-model tests: a tiny transformers Llama with its tokenizer, and checks of saved folders.
#pragma once

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdint>
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

/// The words conversations() draws from.
inline const char* const kWords[] = {"the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while",
                                     "robots", "learn", "to", "grasp", "cubes", "and", "pour", "water", "from", "cup"};

// `n` conversations of one to three exchanges, of varied lengths (so rows have different numbers
// of labelled tokens), from a fixed generator.
inline std::string conversations(int n) {
  std::uint64_t state = 12345;
  const auto next = [&](std::uint64_t below) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % below;
  };
  const auto sentence = [&] {
    std::string s;
    for (auto w = 2 + next(8); w > 0; --w) s += std::string(s.empty() ? "" : " ") + kWords[next(20)];
    return s;
  };
  std::string jsonl;
  for (int i = 0; i < n; ++i) {
    boost::json::array messages;
    for (auto turns = 1 + next(3); turns > 0; --turns) {
      messages.push_back({{"role", "user"}, {"content", sentence()}});
      messages.push_back({{"role", "assistant"}, {"content", sentence()}});
    }
    jsonl += boost::json::serialize(boost::json::object{{"messages", messages}}) + "\n";
  }
  return jsonl;
}

}  // namespace shardkit::test
