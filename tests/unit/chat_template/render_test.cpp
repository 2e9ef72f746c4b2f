// Real chat templates render byte for byte as transformers renders them, with the assistant spans of
// {% generation %}; template errors name the line; what the renderer lacks is refused at parse time
// with line and column.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/chat_template.hpp"
#include "shardkit/error.hpp"
#include "test_support.hpp"

namespace json = boost::json;
using shardkit::chat::ChatTemplate;
using shardkit::chat::RenderInput;
using shardkit::test::contains;
using shardkit::test::slurp;

namespace {

const std::string kData = std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/chat-templates/";
const char* const kFamilies[] = {"aitraining_chatml", "aitraining_default", "llama3",   "llama3_generation",
                                 "mistral_v0_3",      "qwen2_5",            "zephyr",
                                 // More families people fine-tune (more/README: where each came from).
                                 "more/cohere_command_r", "more/command_r7b_tool_use", "more/deepseek_r1_distill_qwen",
                                 "more/gemma2", "more/gemma3", "more/granite3_3", "more/llama3_1", "more/llama3_2",
                                 "more/mistral_nemo", "more/mistral_small_3_2", "more/phi3_5", "more/qwen3"};

// transformers counts characters where the renderer counts bytes: the character offset of byte `at`.
std::size_t char_offset(const std::string& text, std::size_t at) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < at; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++chars;
  return chars;
}

std::tm parse_time(const std::string& iso) {
  std::tm t{};
  std::istringstream(iso) >> std::get_time(&t, "%Y-%m-%dT%H:%M:%S");
  return t;
}

// The error a call gives ("" when none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const shardkit::ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& source) {
  return error_of([&] { ChatTemplate::parse(source, "t.jinja"); });
}

std::string render_error(const std::string& source, const std::string& messages = "[]") {
  RenderInput in;
  in.messages = json::parse(messages).as_array();
  return error_of([&] { ChatTemplate::parse(source, "t.jinja").render(in); });
}

std::string render(const std::string& source) { return ChatTemplate::parse(source, "t.jinja").render(RenderInput()); }

}  // namespace

TEST_CASE("real chat templates render as transformers renders them", "[chat_template]") {
  for (const char* family : kFamilies) {
    const auto expected = json::parse(slurp(kData + family + ".expected.json")).as_object();
    const auto tmpl = ChatTemplate::parse(slurp(kData + json::value_to<std::string>(expected.at("template_file"))), family);
    CHECK(tmpl.has_generation_blocks() == (std::string(family) == "llama3_generation"));
    RenderInput base;
    for (const auto& token : expected.at("special_tokens").as_object())
      if (token.value().is_string()) base.special_tokens[std::string(token.key())] = json::value_to<std::string>(token.value());
    base.now = parse_time(json::value_to<std::string>(expected.at("render_settings").at("strftime_now_fixed_to")));
    const auto& conversations = expected.at("conversations").as_array();
    const auto& rendered = expected.at("rendered").as_array();
    REQUIRE(rendered.size() == conversations.size());
    for (std::size_t i = 0; i < conversations.size(); ++i) {
      INFO(family << ", conversation " << i);
      RenderInput in = base;
      in.messages = conversations[i].at("messages").as_array();
      in.add_generation_prompt = conversations[i].at("add_generation_prompt").as_bool();
      if (rendered[i].is_null()) {  // the template raises: the error carries its message
        std::string message = json::value_to<std::string>(expected.at("errors").as_array()[i]);
        if (const auto colon = message.find("Error: "); colon != std::string::npos && message.find(' ') > colon)
          message.erase(0, colon + 7);  // "TemplateError: <message>" -> "<message>"
        const auto error = error_of([&] { tmpl.render(in); });
        CHECK(contains(error, message));
        CHECK(contains(error, std::string(family) + ":"));
      } else {
        CHECK(tmpl.render(in) == json::value_to<std::string>(rendered[i]));
      }
    }
  }
}

TEST_CASE("{% generation %} spans are where transformers puts the assistant mask", "[chat_template]") {
  const auto expected = json::parse(slurp(kData + "llama3_generation.expected.json")).as_object();
  const auto tmpl = ChatTemplate::parse(slurp(kData + "llama3_generation.jinja"), "llama3_generation");
  const auto& conversations = expected.at("conversations").as_array();
  const auto& results = expected.at("assistant_mask").at("results").as_array();
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    INFO("conversation " << i);
    RenderInput in;
    in.special_tokens = {{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|eot_id|>"}};
    in.messages = conversations[i].at("messages").as_array();
    in.add_generation_prompt = conversations[i].at("add_generation_prompt").as_bool();
    const auto out = tmpl.render_with_spans(in);
    // A conversation without an entry has no assistant turn, so no generation output.
    std::vector<std::pair<std::size_t, std::size_t>> want;
    std::vector<std::string> want_texts;
    for (const auto& r : results) {
      if (r.at("conversation_index").as_int64() != static_cast<std::int64_t>(i)) continue;
      for (const auto& span : r.at("generation_char_spans").as_array())
        want.emplace_back(span.as_array()[0].as_int64(), span.as_array()[1].as_int64());
      for (const auto& text : r.at("generation_span_texts").as_array())
        want_texts.push_back(json::value_to<std::string>(text));
    }
    std::vector<std::pair<std::size_t, std::size_t>> got;
    std::vector<std::string> got_texts;
    for (const auto& span : out.generation_spans) {
      got.emplace_back(char_offset(out.text, span.begin), char_offset(out.text, span.end));
      got_texts.push_back(out.text.substr(span.begin, span.end - span.begin));
    }
    CHECK(got == want);
    CHECK(got_texts == want_texts);
  }
  const auto simple = ChatTemplate::parse("a{% generation %}b{{ 'é' }}{% endgeneration %}d", "t.jinja");
  const auto out = simple.render_with_spans(RenderInput());
  CHECK(out.text == "abéd");
  REQUIRE(out.generation_spans.size() == 1);
  CHECK(out.generation_spans[0].begin == 1);
  CHECK(out.generation_spans[0].end == 4);
}

TEST_CASE("errors while rendering name the template line", "[chat_template]") {
  auto e = render_error("line one\n{{ 'a' + 1 }}");
  CHECK(contains(e, "t.jinja:2: unsupported operand type(s) for +: 'str' and 'int'"));
  e = render_error("{{ missing.x }}");
  CHECK(contains(e, "t.jinja:1: 'missing' is undefined"));
  e = render_error("{% for m in messages %}\n{{ m.content.x.y }}{% endfor %}", R"([{"role": "user", "content": "hi"}])");
  CHECK(contains(e, "t.jinja:2: 'str object' has no attribute 'x'"));
  e = render_error("\n\n{{ raise_exception('roles must alternate') }}");
  CHECK(contains(e, "t.jinja:3: the template raised an error: roles must alternate"));
  CHECK(contains(render_error("{{ 1 + 2 ~ 3 }}"), "unsupported operand type(s) for +: 'int' and 'str'"));
  CHECK(contains(render_error("{{ 1 // 0 }}"), "division or modulo by zero"));
  CHECK(contains(render_error("{{ 'É' | lower }}"), "not supported"));
  CHECK(contains(render_error("{{ none.x + 1 }}"), "None has no attribute 'x'"));
  CHECK(contains(render_error("{% set x = 1 %}{% set x.y = 2 %}"), "'x' is not a namespace()"));
  CHECK(contains(render_error("{% for a, b in [[1, 2, 3]] %}{% endfor %}"), "too many values to unpack"));

  // Mistral's own check of alternating roles.
  const auto mistral = ChatTemplate::parse(slurp(kData + "mistral_v0_3.jinja"), "mistral_v0_3");
  RenderInput in;
  in.messages = json::parse(R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])").as_array();
  e = error_of([&] { mistral.render(in); });
  CHECK(contains(e, "mistral_v0_3:18: the template raised an error: After the optional system message, "
                    "conversation roles must alternate user/assistant/user/assistant/..."));
}

TEST_CASE("what the renderer lacks is refused at parse time with line and column", "[chat_template]") {
  const std::string tail = " is not supported by shardkit's chat template renderer";
  CHECK(contains(parse_error("a\n  {% include 'x.jinja' %}"), "t.jinja:2:6: {% include %}" + tail));
  CHECK(contains(parse_error("{% extends 'base.jinja' %}"), "t.jinja:1:4: {% extends %}" + tail));
  CHECK(contains(parse_error("{% filter upper %}x{% endfilter %}"), "t.jinja:1:4: {% filter %}" + tail));
  CHECK(contains(parse_error("{% raw %}{{ x }}{% endraw %}"), "t.jinja:1:4: {% raw %}" + tail));
  CHECK(contains(parse_error("{{ x | wordwrap(5) }}"), "t.jinja:1:8: the 'wordwrap' filter" + tail));
  CHECK(contains(parse_error("{{ 'é' | wordwrap }}"), "t.jinja:1:10: the 'wordwrap' filter" + tail));
  CHECK(contains(parse_error("{{ x | map('wordwrap') | list }}"), "t.jinja:1:8: the 'wordwrap' filter" + tail));
  CHECK(contains(parse_error("{{ x is escaped }}"), "t.jinja:1:9: the 'escaped' test" + tail));
  CHECK(contains(parse_error("{{ 'a'.format(1) }}"), "t.jinja:1:8: the method format()" + tail));
  CHECK(contains(parse_error("{% for x in [1] %}{{ loop.cycle('a') }}{% endfor %}"), "t.jinja:1:27: loop.cycle" + tail));
  CHECK(contains(parse_error("{% for x in y recursive %}{% endfor %}"), "t.jinja:1:15: a recursive for loop" + tail));
  CHECK(contains(parse_error("{{ f(*args) }}"), "t.jinja:1:6: *args and **kwargs in a call" + tail));
  CHECK(contains(parse_error("{{ cycler(1, 2) }}"), "t.jinja:1:4: the global 'cycler'" + tail));
  CHECK(contains(parse_error("{% macro m() %}{% generation %}x{% endgeneration %}{% endmacro %}"),
                 "t.jinja:1:19: {% generation %} inside a macro"));
  // Refused even where no conversation would reach it.
  CHECK(contains(parse_error("{% if false %}\n{{ x | wordwrap }}\n{% endif %}"), "t.jinja:2:8: the 'wordwrap' filter" + tail));
}

TEST_CASE("syntax errors name line and column", "[chat_template]") {
  CHECK(contains(parse_error("{% if x %}no end"), "t.jinja:1:17: the template ends inside {% if %}: {% endif %} is missing"));
  CHECK(contains(parse_error("ok\n{{ x "), "t.jinja:2:1: this expression is not closed: '}}' is missing"));
  CHECK(contains(parse_error("{# open"), "t.jinja:1:1: this comment is not closed"));
  CHECK(contains(parse_error("{{ 'abc }}"), "t.jinja:1:4: this string literal is not closed"));
  CHECK(contains(parse_error("{% endfor %}"), "t.jinja:1:4: {% endfor %} closes no open block"));
  CHECK(contains(parse_error("{% break %}"), "t.jinja:1:4: {% break %} outside a for loop"));
  CHECK(contains(parse_error("{{ 1 + }}"), "t.jinja:1:8: expected an expression here, found '}}'"));
  CHECK(contains(parse_error("bad \xff byte"), "t.jinja: the chat template is not valid UTF-8"));
}

TEST_CASE("the variables transformers passes: tools and documents are None, absent tokens undefined", "[chat_template]") {
  CHECK(render("{{ tools is none }}{{ documents is none }}{{ bos_token is defined }}{{ add_generation_prompt }}") ==
        "TrueTrueFalseFalse");
  RenderInput in;
  in.tools = json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  in.extra = json::parse(R"({"enable_thinking": true})").as_object();
  const auto tmpl = ChatTemplate::parse("{{ tools[0].function.name }} {{ enable_thinking }} {{ tools | tojson }}", "t.jinja");
  CHECK(tmpl.render(in) == R"(f True [{"type": "function", "function": {"name": "f"}}])");
}

TEST_CASE("a template cannot hang the renderer or exhaust its memory", "[chat_template]") {
  // Recursion, a string doubled in a loop, loops without end in sight, and nesting that would
  // exhaust the parser's stack each stop with an error naming the template line.
  CHECK(contains(render_error("{% macro f() %}{{ f() }}{% endmacro %}\n{{ f() }}"), "nest more than 100 deep"));
  CHECK(contains(render_error("{% set ns = namespace(s='ab') %}\n{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}"
                              "{% endfor %}"),
                 "t.jinja:2: a string joined with + would hold more than 64 MiB"));
  CHECK(contains(render_error("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                              "{% endfor %}"),
                 "a string joined with ~ would hold more than 64 MiB"));
  CHECK(contains(render_error("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}"),
                 "more than 100000 loop iterations in one render"));
  // A chat of 5,000 messages is well inside the budget.
  CHECK(render("{% for i in range(5000) %}{{ i % 2 }}{% endfor %}").size() == 5000);
  CHECK(contains(parse_error("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}"),
                 "t.jinja:1:"));
  CHECK(contains(parse_error("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}"),
                 "statements and expressions nest more than 200 deep"));
  std::string deep_ifs;
  for (int i = 0; i < 300; ++i) deep_ifs += "{% if true %}";
  CHECK(contains(parse_error(deep_ifs), "nest more than 200 deep"));
  CHECK(contains(parse_error("{{ " + std::string(500, '-') + "1 }}"), "nest more than 200 deep"));
}
