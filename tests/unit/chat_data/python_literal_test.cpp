// Conversations stored as Python literals (CSV cells, as AITraining reads them with ast.literal_eval).
#include <boost/json.hpp>

#include "python_literal.hpp"
#undef CHECK
#include <catch2/catch.hpp>

using shardkit::text::parse_python_literal;

namespace {

boost::json::value parsed(const std::string& text) {
  std::string problem;
  auto value = parse_python_literal(text, problem);
  INFO(text << " -> " << problem);
  REQUIRE(value.has_value());
  return *value;
}

std::string problem_of(const std::string& text) {
  std::string problem;
  const auto value = parse_python_literal(text, problem);
  REQUIRE_FALSE(value.has_value());
  return problem;
}

}  // namespace

TEST_CASE("a conversation as Python's repr writes it reads as the same JSON", "[chat_data][python_literal]") {
  const auto value = parsed(R"([{'role': 'user', 'content': "It's 5 o'clock"}, {'role': 'assistant', 'content': 'Yes.\n'}])");
  CHECK(value == boost::json::parse(R"([{"role": "user", "content": "It's 5 o'clock"},
                                       {"role": "assistant", "content": "Yes.\n"}])"));
}

TEST_CASE("Python literals: escapes, unicode, numbers, constants, tuples and joined strings", "[chat_data][python_literal]") {
  CHECK(parsed(R"('caf\xe9 \u00e9\U0001F600 \\ \' \"')") == boost::json::value("caf\xc3\xa9 \xc3\xa9\xf0\x9f\x98\x80 \\ ' \""));
  CHECK(parsed("'a' \"b\"  'c'") == boost::json::value("abc"));
  CHECK(parsed("'''three\nlines'''") == boost::json::value("three\nlines"));
  CHECK(parsed("[1, -2, 3.5, 1e3, 1_000]") == boost::json::parse("[1, -2, 3.5, 1000.0, 1000]"));
  CHECK(parsed("{'a': True, 'b': False, 'c': None,}") == boost::json::parse(R"({"a": true, "b": false, "c": null})"));
  CHECK(parsed("('x', ('y',), [])") == boost::json::parse(R"(["x", ["y"], []])"));
  CHECK(parsed("  'ünïcödé ✓'  ") == boost::json::value("ünïcödé ✓"));
  CHECK(parsed(R"('unknown \q escape')") == boost::json::value("unknown \\q escape"));
  CHECK(parsed(R"(u'\101\0' r'\n' U"x")") == boost::json::value(std::string("A\0\\nx", 5)));
}

TEST_CASE("what is not a Python literal is refused, saying where", "[chat_data][python_literal]") {
  CHECK(problem_of("[{'role': 'user'") == "character 17: expected ',' or '}'");
  CHECK(problem_of("'never closed") == "character 14: a string is never closed");
  CHECK(problem_of("{'a': 1} extra") == "character 10: unexpected text after the value");
  CHECK(problem_of("{1: 'a'}") == "character 3: a dict key that is not a string");
  CHECK(problem_of("[os.system('x')]") == "character 2: 'o' does not start a Python literal");
  CHECK(problem_of("") == "character 1: the text ends where a value should start");
  CHECK(problem_of(std::string(150, '[')) == "character 102: nested more than 100 deep");
}
