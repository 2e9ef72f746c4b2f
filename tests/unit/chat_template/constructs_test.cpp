// Each construct chat templates use renders as transformers renders it (jinja2 3.1.6 with trim_blocks,
// lstrip_blocks and loop controls): the expected strings are jinja2's output for the same source.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <ctime>
#include <string>

#include "chat_template/chat_template.hpp"

using shardkit::chat::ChatTemplate;
using shardkit::chat::RenderInput;

namespace {

struct Case {
  const char* name;
  const char* source;
  const char* expected;
};

// Rendered with four messages (system, user, assistant, user), bos "<s>", eos "</s>", and
// strftime_now() at 2025-01-15 12:00:00.
const Case kCases[] = {
    {"trim_blocks",
     "{% if true %}\nA\n{% endif %}\nB",
     "A\nB"},
    {"lstrip_blocks",
     "  {% if true %}x{% endif %}|a  {% if true %}y{% endif %}",
     "x|a  y"},
    {"lstrip after newline",
     "a\n    {% if true %}\n    b\n    {% endif %}\nc",
     "a\n    b\nc"},
    {"plus keeps leading space",
     "a\n  {%+ if true %}x{% endif %}",
     "a\n  x"},
    {"plus keeps newline",
     "{% if true +%}\nx{% endif %}",
     "\nx"},
    {"minus strips",
     "{{ 'a' }}  \n  {{- 'b' -}}  \n\n  {{ 'c' }}",
     "abc"},
    {"variable tags keep newline",
     "{{ 'a' }}\nb",
     "a\nb"},
    {"comments",
     "a{# note #}b\n  {# line #}\nc{#- x -#}  d",
     "ab\ncd"},
    {"crlf",
     "a\r\n{% if true %}\r\nb{% endif %}\r\n",
     "a\nb"},
    {"final newline",
     "x\n\n",
     "x\n"},
    {"tab lstrip",
     "\t{% if true %}t{% endif %}",
     "t"},
    {"arithmetic",
     "{{ 7 // 2 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 / 2 }}|{{ 2 ** 10 }}|{{ 1 + 2 * 3 }}|{{ 7.5 // 2 }}|{{ -7.5 % 2 }}",
     "3|-4|2|3.5|1024|7|3.0|0.5"},
    {"concat",
     "{{ 'a' ~ 1 ~ none ~ true ~ missing }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}|{{ '-' * 3 }}",
     "a1NoneTrue|ab|[1, 2]|---"},
    {"floats",
     "{{ 1.0 }}|{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 2.5e-5 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 0.0001 }}|{{ 10 / 4 }}|{{ -0.0 }}",
     "1.0|0.30000000000000004|1e+20|2.5e-05|1e+16|1000000000000000.0|0.0001|2.5|-0.0"},
    {"string escapes",
     "{{ 'a\\'b' }}|{{ \"c\\\"d\" }}|{{ 'e\\nf\\tg\\\\' }}|{{ '\\u00e9\\x41' }}|{{ 'café ☕' }}|{{ 'x' 'y' }}",
     "a'b|c\"d|e\nf\tg\\|éA|café ☕|xy"},
    {"literals",
     "{{ true }}{{ True }}{{ false }}{{ none }}{{ None }}|{{ 1_000 }}|{{ (1, 2) }}|{{ (1,) }}|{{ () }}|{{ [] }}|{{ {} }}",
     "TrueTrueFalseNoneNone|1000|(1, 2)|(1,)|()|[]|{}"},
    {"repr",
     "{{ [1, 'a', none, true, {'k': 'v'}, 2.5] }}|{{ [\"it's\"] }}|{{ {'a': [1, (2, 3)]} }}|{{ ['tab\\there'] }}",
     "[1, 'a', None, True, {'k': 'v'}, 2.5]|[\"it's\"]|{'a': [1, (2, 3)]}|['tab\\there']"},
    {"comparisons",
     "{{ 1 < 2 < 3 }}{{ 1 < 3 < 2 }}{{ 'a' < 'b' }}{{ 2 == 2.0 }}{{ 1 != 1 }}{{ [1, 2] < [1, 3] }}{{ 3 >= 3 }}",
     "TrueFalseTrueTrueFalseTrueTrue"},
    {"in",
     "{{ 'a' in 'cat' }}{{ 3 not in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 'z' in missing }}{{ not 'a' in 'b' }}",
     "TrueTrueTrueFalseTrue"},
    {"and or",
     "{{ 0 or 'x' }}|{{ 1 and 'y' }}|{{ none or [] }}|{{ '' and 1 }}|{{ not none }}",
     "x|y|[]||True"},
    {"inline if",
     "{{ 'y' if 1 > 0 else 'n' }}|{{ 'x' if false }}|{{ 'a' if false else 'b' if true else 'c' }}",
     "y||b"},
    {"precedence",
     "{{ 'a' + ' b ' | trim + 'c' }}|{{ -2 ** 2 }}|{{ not 1 == 2 }}|{{ 2 * 3 ~ 4 }}|{{ -1 | abs }}|{{ (1 + 2) ~ 3 }}",
     "abc|4|True|64|1|33"},
    {"slices",
     "{{ 'hello'[1:3] }}|{{ 'hello'[::-1] }}|{{ [1, 2, 3, 4][-2:] }}|{{ [1, 2, 3, 4][::2] }}|{{ 'héllo'[1] }}|{{ 'abc'[-1] }}|{{ [1, 2, 3][5:] }}|{{ 'abcdef'[4:1:-1] }}",
     "el|olleh|[3, 4]|[1, 3]|é|c|[]|edc"},
    {"messages access",
     "{{ messages[0]['role'] }}|{{ messages[0].content }}|{{ messages[-1].content }}|{{ messages[1:] | length }}|{{ messages.0.role }}",
     "system|Be brief.|again|3|system"},
    {"missing keys",
     "[{{ messages[0].tool_calls }}]{{ messages[0].tool_calls is defined }}{{ messages[9] is defined }}{{ (messages[0].content.content) is defined }}",
     "[]FalseFalseFalse"},
    {"undefined",
     "[{{ missing }}]{{ missing is defined }}{{ missing is undefined }}|{{ missing | default('d') }}|{{ '' | default('e', true) }}|{{ none | default('f') }}|{{ missing | length }}|{{ missing | list }}|{{ missing == missing }}",
     "[]FalseTrue|d|e|None|0|[]|True"},
    {"str methods",
     "{{ '  a b  '.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ 'x y  z '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}",
     "a b|['a', 'b', '', 'c']|['x', 'y', 'z']|['a', 'b c']|['a b', 'c']|True|True"},
    {"more str methods",
     "{{ 'aXa'.replace('a', 'b') }}|{{ 'hello world'.title() }}|{{ 'ABC'.lower() }}|{{ 'abc'.upper() }}|{{ '-'.join(['a', 'b']) }}|{{ 'xxhixx'.lstrip('x') }}|{{ 'xxhixx'.rstrip('x') }}|{{ 'they\\'re 1st'.title() }}|{{ 'hELLO'.capitalize() }}|{{ 'banana'.find('an') }}|{{ 'banana'.count('a') }}",
     "bXb|Hello World|abc|ABC|a-b|hixx|xxhi|They'Re 1St|Hello|1|3"},
    {"dict methods",
     "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}|{{ {'a': 1}.get('a') }}{{ {'a': 1}.get('z', 'dflt') }}{{ {'a': 1}.get('z') }}|{{ {'a': 1, 'b': 2}.keys() | list }}|{{ {'a': 1, 'b': 2}.values() | list }}",
     "a=1;b=2;|1dfltNone|['a', 'b']|[1, 2]"},
    {"loop variables",
     "{% for x in ['a', 'b', 'c'] %}{{ loop.index0 }}{{ loop.index }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ x }} {% endfor %}",
     "013TrueFalse3a 122FalseFalse3b 231FalseTrue3c "},
    {"loop previtem",
     "{% for x in [1, 2, 3] %}{{ loop.previtem is defined }}{{ loop.nextitem | default('-') }};{% endfor %}",
     "False2;True3;True-;"},
    {"filtered loop",
     "{% for m in messages if m.role != 'system' %}{{ loop.index }}{{ m.role }}{{ loop.last }} {% endfor %}",
     "1userFalse 2assistantFalse 3userTrue "},
    {"for else",
     "{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] if x > 5 %}x{% else %}none kept{% endfor %}",
     "empty|none kept"},
    {"break continue",
     "{% for x in range(10) %}{% if x == 5 %}{% break %}{% endif %}{% if x is odd %}{% continue %}{% endif %}{{ x }}{% endfor %}",
     "024"},
    {"scoping",
     "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + 10 %}{{ x }},{% endfor %}{{ x }}|{% if true %}{% set y = 5 %}{% endif %}{{ y }}",
     "11,11,1|5"},
    {"namespace",
     "{% set ns = namespace(found=false, n=0) %}{% for i in [1, 2, 3] %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.found }} {{ ns.n }}",
     "True 6"},
    {"set overrides a variable",
     "{% set messages = messages[1:] %}{{ messages | length }} {{ messages[0].role }}",
     "3 user"},
    {"if elif else",
     "{% for n in [1, 2, 3] %}{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %} {% endfor %}",
     "one two many "},
    {"macro",
     "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', punct='?') }} {{ greet(name='Cy') }}",
     "Hi Ann! Hi Bob? Hi Cy!"},
    {"call block",
     "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}inside{% endcall %}",
     "<b>inside</b>"},
    {"set block",
     "{% set x %}a{{ 1 }}b{% endset %}[{{ x }}]",
     "[a1b]"},
    {"unpacking",
     "{% set a, b = 1, 2 %}{{ b }}{{ a }}|{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}",
     "21|37"},
    {"set tuple",
     "{% set t = 1, 2 %}{{ t }}",
     "(1, 2)"},
    {"select filters",
     "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(', ') }}|{{ messages | rejectattr('role', 'equalto', 'user') | list | length }}|{{ messages | selectattr('role') | list | length }}",
     "hi, again|2|4"},
    {"select reject",
     "{{ [1, 2, 3, 4] | select('odd') | list }}|{{ [1, 2, 3] | reject('equalto', 2) | list }}|{{ [0, 1, '', 'a'] | select | list }}|{{ ['a', 'b'] | map('upper') | join }}",
     "[1, 3]|[1, 3]|[1, 'a']|AB"},
    {"tojson",
     "{{ {'b': 1, 'a': [1, 'é', none, 2.5, true], 'q': 'say \"hi\"\\n'} | tojson }}",
     "{\"b\": 1, \"a\": [1, \"é\", null, 2.5, true], \"q\": \"say \\\"hi\\\"\\n\"}"},
    {"tojson indent",
     "{{ {'a': [1, 2], 'b': {}, 'c': []} | tojson(indent=2) }}|{{ [1, {'x': 'y'}] | tojson(indent=4) }}",
     "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}|[\n    1,\n    {\n        \"x\": \"y\"\n    }\n]"},
    {"tojson options",
     "{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}|{{ 'é☕' | tojson(ensure_ascii=true) }}|{{ {'a': 1} | tojson(separators=(',', ':')) }}|{{ 'x' | tojson }}",
     "{\"a\": 2, \"b\": 1}|\"\\u00e9\\u2615\"|{\"a\":1}|\"x\""},
    {"string filters",
     "{{ '  x  ' | trim }}|{{ 'ab' | upper }}|{{ 'AB' | lower }}|{{ 'hello world-wide o\\'neil' | title }}|{{ 'hELLO' | capitalize }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ 42 | string | length }}",
     "x|AB|ab|Hello World-Wide O'neil|Hello|bba|2"},
    {"list filters",
     "{{ [3, 1] | first }}{{ [3, 1] | last }}|{{ 'abc' | list }}|{{ {'a': 1} | items | list }}|{{ [1, 2, 3] | reverse | list }}|{{ 'abc' | reverse }}|{{ [] | first is defined }}|{{ {'a': 1, 'b': 2} | list }}",
     "31|['a', 'b', 'c']|[('a', 1)]|[3, 2, 1]|cba|False|['a', 'b']"},
    {"number filters",
     "{{ '3.7' | int }}{{ 'x' | int }}{{ 'x' | int(7) }}{{ '2' | float }}{{ 3.9 | int }}{{ -3 | abs }}{{ true | int }}|{{ '  12 ' | int }}",
     "3072.0331|12"},
    {"length",
     "{{ 'hé' | length }}{{ [1, 2] | count }}{{ {'a': 1} | length }}{{ messages | length }}",
     "2214"},
    {"tests",
     "{{ 1 is number }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ none is none }}{{ true is boolean }}{{ false is false }}{{ 3 is odd }}{{ 4 is even }}{{ 4 is divisibleby 2 }}{{ 'a' is in ['a'] }}{{ 1 is eq 1 }}{{ x is undefined }}{{ 1 is not string }}{{ [] is sequence }}{{ 1 is integer }}{{ 1.0 is float }}{{ true is true }}{{ 2 is gt 1 }}{{ 'a' is ne 'b' }}",
     "TrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue"},
    {"test quirks",
     "{{ true is number }}{{ missing is iterable }}{{ missing is sequence }}{{ {} is sequence }}{{ 'a' is mapping }}{{ 1 is boolean }}{{ true is integer }}",
     "TrueTrueTrueTrueFalseFalseFalse"},
    {"strftime_now",
     "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M') }}",
     "15 Jan 2025|2025-01-15 12:00"},
    {"range",
     "{{ range(3) | list }}|{{ range(1, 7, 2) | list }}|{{ range(3, 0, -1) | join(',') }}",
     "[0, 1, 2]|[1, 3, 5]|3,2,1"},
    {"dict global",
     "{{ dict(a=1, b='x') }}|{{ namespace(a=1).a }}",
     "{'a': 1, 'b': 'x'}|1"},
};

RenderInput conversation() {
  RenderInput in;
  in.messages = boost::json::parse(R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "hello"}, {"role": "user", "content": "again"}])")
                    .as_array();
  in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  std::tm now{};
  now.tm_year = 2025 - 1900;
  now.tm_mon = 0;
  now.tm_mday = 15;
  now.tm_hour = 12;
  in.now = now;
  return in;
}

}  // namespace

TEST_CASE("each construct renders as jinja2 renders it under transformers' settings", "[chat_template]") {
  const auto in = conversation();
  for (const auto& c : kCases) {
    INFO(c.name << ": " << c.source);
    std::string rendered;
    CHECK_NOTHROW(rendered = ChatTemplate::parse(c.source, "case.jinja").render(in));
    CHECK(rendered == c.expected);
  }
}
