// Jinja's filters and tests that chat templates use, with Jinja 3.1's semantics and transformers' `tojson`
// (see builtins.hpp).
#include "chat_template/builtins.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "chat_template/errors.hpp"
#include "chat_template/json_dumps.hpp"
#include "chat_template/text.hpp"

namespace shardkit::chat {
namespace {

using K = Value::Kind;
using Filter = Value (*)(const Value&, CallArgs&);
using Test = bool (*)(const Value&, CallArgs&);

const Value& required(const Value* v, const char* function) {
  if (!v) throw EvalError(std::string(function) + "() is missing an argument");
  return *v;
}
void no_arguments(const CallArgs& args, const char* function) { bind(args, {}, function); }

// Jinja's attribute getter for map, selectattr, join and the like: "a.b.0" looks up a, then b, then
// item 0, each as `x[...]` does.
Value lookup_path(const Value& item, const Value& path) {
  if (!path.is_string()) return get_item(item, path);
  const std::string dot = ".";
  Value current = item;
  for (const auto& part : split(path.as_string(), &dot, -1, false)) {
    std::int64_t index = 0;
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                        std::from_chars(part.data(), part.data() + part.size(), index).ec == std::errc();
    current = get_item(current, digits ? Value(index) : Value(part));
  }
  return current;
}

// Python's int() of a str ("  -1_000 "); nullopt where Python raises ValueError.
std::optional<std::int64_t> parse_int(const std::string& text) {
  std::string s = strip(text, nullptr, true, true), clean;
  const std::size_t sign = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  for (std::size_t i = sign; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    const bool joint = s[i] == '_' && i > sign && i + 1 < s.size() && s[i - 1] != '_' && s[i + 1] != '_';
    if (!digit && !joint) return std::nullopt;
    if (digit) clean += s[i];
  }
  if (clean.empty()) return std::nullopt;
  if (s[0] == '-') clean.insert(0, "-");
  std::int64_t value = 0;
  if (std::from_chars(clean.data(), clean.data() + clean.size(), value).ec != std::errc())
    throw EvalError("the integer " + clean + " does not fit the renderer's 64-bit ints");
  return value;
}

// Python's float() of a str ("1e3", " -inf "); nullopt where Python raises ValueError.
std::optional<double> parse_float(const std::string& text) {
  std::string s = strip(text, nullptr, true, true);
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.erase(0, 1);
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  double value = 0;
  if (lower == "inf" || lower == "infinity") {
    value = HUGE_VAL;
  } else if (lower == "nan") {
    value = std::nan("");
  } else {
    if (s.empty() || s.find_first_of("_xXpP") != std::string::npos) return std::nullopt;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), value);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  }
  return negative ? -value : value;
}

std::int64_t truncate(double d) {
  if (std::isinf(d) || std::fabs(d) >= 9.2e18) throw EvalError("cannot convert float " + float_repr(d) + " to a 64-bit integer");
  return static_cast<std::int64_t>(std::trunc(d));
}

Value f_default(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"default_value", "boolean"}, "default");
  if (v.is_undefined() || (a[1] && truthy(*a[1]) && !truthy(v))) return a[0] ? *a[0] : Value("");
  return v;
}

Value f_length(const Value& v, CallArgs& args) {
  no_arguments(args, "length");
  return Value(length(v));
}

Value f_join(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"d", "attribute"}, "join");
  const std::string separator = a[0] ? to_str(*a[0]) : "";
  std::string out;
  bool first = true;
  for (const auto& item : iterate(v)) {
    if (!first) out += separator;
    first = false;
    out += to_str(a[1] ? lookup_path(item, *a[1]) : item);
  }
  return Value(std::move(out));
}

Value f_list(const Value& v, CallArgs& args) {
  no_arguments(args, "list");
  return Value(iterate(v));
}

Value f_first(const Value& v, CallArgs& args) {
  no_arguments(args, "first");
  const auto items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(const Value& v, CallArgs& args) {
  no_arguments(args, "last");
  const auto items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_reverse(const Value& v, CallArgs& args) {
  no_arguments(args, "reverse");
  if (v.is_string()) {
    auto chars = decode_utf8(v.as_string());
    std::reverse(chars.begin(), chars.end());
    return Value(encode_utf8(chars));
  }
  auto items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

template <Case C>
Value f_case(const Value& v, CallArgs& args) {
  no_arguments(args, "upper/lower/title/capitalize");
  return Value(change_case(to_str(v), C));
}

Value f_trim(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"chars"}, "trim");
  if (a[0] && a[0]->kind() != K::None && !a[0]->is_string()) throw EvalError("trim()'s chars must be a str");
  return Value(strip(to_str(v), a[0] && a[0]->is_string() ? &a[0]->as_string() : nullptr, true, true));
}

Value f_string(const Value& v, CallArgs& args) {
  no_arguments(args, "string");
  return Value(to_str(v));
}

Value f_replace(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"old", "new", "count"}, "replace");
  if (a[2] && a[2]->kind() != K::None && a[2]->kind() != K::Int)
    throw EvalError("replace()'s count must be an int, not " + type_name(*a[2]));
  const std::int64_t count = a[2] && a[2]->kind() == K::Int ? a[2]->as_int() : -1;
  return Value(replace(to_str(v), to_str(required(a[0], "replace")), to_str(required(a[1], "replace")), count));
}

Value f_int(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"default", "base"}, "int");
  if (a[1] && !(a[1]->kind() == K::Int && a[1]->as_int() == 10))
    throw EvalError("int() with a base other than 10 is not supported by shardkit's chat template renderer");
  const Value otherwise = a[0] ? *a[0] : Value(0);
  std::optional<double> real;
  if (v.kind() == K::Int || v.kind() == K::Bool) return Value(v.as_int());
  if (v.kind() == K::Float) real = v.as_float();
  if (v.is_string()) {
    if (const auto i = parse_int(v.as_string())) return Value(*i);
    real = parse_float(v.as_string());
  }
  return real && !std::isnan(*real) ? Value(truncate(*real)) : otherwise;
}

Value f_float(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"default"}, "float");
  if (v.is_number()) return Value(v.as_float());
  if (v.is_string())
    if (const auto d = parse_float(v.as_string())) return Value(*d);
  return a[0] ? *a[0] : Value(0.0);
}

Value f_abs(const Value& v, CallArgs& args) {
  no_arguments(args, "abs");
  if (v.kind() == K::Float) return Value(std::fabs(v.as_float()));
  if (v.kind() != K::Int && v.kind() != K::Bool) throw EvalError("bad operand type for abs(): '" + type_name(v) + "'");
  if (v.as_int() == std::numeric_limits<std::int64_t>::min()) throw EvalError("integer overflow in abs()");
  return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
}

Value f_items(const Value& v, CallArgs& args) {
  no_arguments(args, "items");
  List out;
  if (v.is_undefined()) return Value(std::move(out));
  if (v.kind() != K::Dict) throw EvalError("Can only get item pairs from a mapping.");
  for (const auto& [key, value] : v.as_dict().entries()) out.emplace_back(List{Value(key), value}, true);
  return Value(std::move(out));
}

Value f_map(const Value& v, CallArgs& args) {
  List out;
  if (!truthy(v)) return Value(std::move(out));
  if (args.positional.empty()) {  // map(attribute='x', default=...)
    const auto a = bind(args, {"attribute", "default"}, "map");
    if (!a[0]) throw EvalError("map() needs a filter name or attribute=");
    for (const auto& item : iterate(v)) {
      Value x = lookup_path(item, *a[0]);
      if (x.is_undefined() && a[1] && a[1]->kind() != K::None) x = *a[1];
      out.push_back(std::move(x));
    }
    return Value(std::move(out));
  }
  if (!args.positional[0].is_string()) throw EvalError("map()'s filter name must be a str");
  const std::string name = args.positional[0].as_string();
  const CallArgs rest{std::vector<Value>(args.positional.begin() + 1, args.positional.end()), args.keyword};
  for (const auto& item : iterate(v)) {
    CallArgs each = rest;
    out.push_back(apply_filter(name, item, each));
  }
  return Value(std::move(out));
}

// select, reject, selectattr, rejectattr: the items whose (attribute's) test result is `keep`.
template <bool ByAttribute, bool Keep>
Value f_select(const Value& v, CallArgs& args) {
  List out;
  if (!truthy(v)) return Value(std::move(out));
  const std::size_t at = ByAttribute ? 1 : 0;
  if (args.positional.size() < at) throw EvalError("selectattr() and rejectattr() need an attribute name");
  std::string test;
  CallArgs rest;
  if (args.positional.size() > at) {
    if (!args.positional[at].is_string()) throw EvalError("the test name of select()/reject() must be a str");
    test = args.positional[at].as_string();
    rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.positional.end());
    rest.keyword = args.keyword;
  }
  for (const auto& item : iterate(v)) {
    const Value subject = ByAttribute ? lookup_path(item, args.positional[0]) : item;
    CallArgs each = rest;
    if ((test.empty() ? truthy(subject) : apply_test(test, subject, each)) == Keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value f_tojson(const Value& v, CallArgs& args) {
  const auto a = bind(args, {"ensure_ascii", "indent", "separators", "sort_keys"}, "tojson");
  JsonFormat format;
  format.ensure_ascii = a[0] && truthy(*a[0]);
  if (a[1] && a[1]->kind() != K::None) {
    if (a[1]->is_string())
      format.indent = a[1]->as_string();
    else if (a[1]->kind() == K::Int || a[1]->kind() == K::Bool)
      format.indent = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, a[1]->as_int())), ' ');
    else
      throw EvalError("tojson()'s indent must be an int or a str");
    format.item_separator = ",";
  }
  if (a[2] && a[2]->kind() != K::None) {
    const auto& pair = a[2]->is_sequence() ? a[2]->as_list() : List{};
    if (pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
      throw EvalError("tojson()'s separators must be a pair of strs");
    format.item_separator = pair[0].as_string();
    format.key_separator = pair[1].as_string();
  }
  format.sort_keys = a[3] && truthy(*a[3]);
  return Value(json_dumps(v, format));
}

const std::map<std::string_view, Filter>& filters() {
  static const std::map<std::string_view, Filter> kFilters = {
      {"abs", f_abs},
      {"capitalize", f_case<Case::Capitalize>},
      {"count", f_length},
      {"d", f_default},
      {"default", f_default},
      {"first", f_first},
      {"float", f_float},
      {"int", f_int},
      {"items", f_items},
      {"join", f_join},
      {"last", f_last},
      {"length", f_length},
      {"list", f_list},
      {"lower", f_case<Case::Lower>},
      {"map", f_map},
      {"reject", f_select<false, false>},
      {"rejectattr", f_select<true, false>},
      {"replace", f_replace},
      {"reverse", f_reverse},
      {"safe", f_string},
      {"select", f_select<false, true>},
      {"selectattr", f_select<true, true>},
      {"string", f_string},
      {"title", f_case<Case::JinjaTitle>},
      {"tojson", f_tojson},
      {"trim", f_trim},
      {"upper", f_case<Case::Upper>},
  };
  return kFilters;
}

const Value& other(CallArgs& args, const char* test) { return required(bind(args, {"other"}, test)[0], test); }

std::int64_t int_subject(const Value& v, const char* test) {
  if (v.kind() != K::Int && v.kind() != K::Bool)
    throw EvalError(std::string("the '") + test + "' test needs an int, not " + type_name(v));
  return v.as_int();
}

bool t_eq(const Value& v, CallArgs& a) { return equals(v, other(a, "eq")); }
bool t_ne(const Value& v, CallArgs& a) { return !equals(v, other(a, "ne")); }
bool t_lt(const Value& v, CallArgs& a) { return compare(v, other(a, "lt")) < 0; }
bool t_le(const Value& v, CallArgs& a) { return compare(v, other(a, "le")) <= 0; }
bool t_gt(const Value& v, CallArgs& a) { return compare(v, other(a, "gt")) > 0; }
bool t_ge(const Value& v, CallArgs& a) { return compare(v, other(a, "ge")) >= 0; }

// Tests without arguments.
const std::map<std::string_view, bool (*)(const Value&)>& predicates() {
  using V = const Value&;
  static const std::map<std::string_view, bool (*)(const Value&)> kPredicates = {
      {"defined", [](V v) { return !v.is_undefined(); }},
      {"undefined", [](V v) { return v.is_undefined(); }},
      {"none", [](V v) { return v.kind() == K::None; }},
      {"boolean", [](V v) { return v.kind() == K::Bool; }},
      {"true", [](V v) { return v.kind() == K::Bool && v.as_bool(); }},
      {"false", [](V v) { return v.kind() == K::Bool && !v.as_bool(); }},
      {"integer", [](V v) { return v.kind() == K::Int; }},
      {"float", [](V v) { return v.kind() == K::Float; }},
      {"number", [](V v) { return v.is_number(); }},
      {"string", [](V v) { return v.is_string(); }},
      {"mapping", [](V v) { return v.kind() == K::Dict; }},
      {"callable", [](V v) { return v.kind() == K::Callable; }},
      // Jinja's Undefined has __iter__, __len__ and __getitem__: it counts as iterable and as a sequence.
      {"iterable", [](V v) { return v.is_undefined() || v.is_string() || v.is_sequence() || v.kind() == K::Dict; }},
      {"sequence", [](V v) { return v.is_undefined() || v.is_string() || v.is_sequence() || v.kind() == K::Dict; }},
      {"odd", [](V v) { return int_subject(v, "odd") % 2 != 0; }},
      {"even", [](V v) { return int_subject(v, "even") % 2 == 0; }},
  };
  return kPredicates;
}

bool t_divisibleby(const Value& v, CallArgs& a) {
  const std::int64_t n = int_subject(required(bind(a, {"num"}, "divisibleby")[0], "divisibleby"), "divisibleby");
  if (n == 0) throw EvalError("integer division or modulo by zero");
  return int_subject(v, "divisibleby") % n == 0;
}
bool t_in(const Value& v, CallArgs& a) { return contains(required(bind(a, {"seq"}, "in")[0], "in"), v); }

// Tests with an argument.
const std::map<std::string_view, Test>& tests() {
  static const std::map<std::string_view, Test> kTests = {
      {"divisibleby", t_divisibleby}, {"in", t_in},
      {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
      {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
      {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
  };
  return kTests;
}

}  // namespace

bool has_filter(std::string_view name) { return filters().count(name) != 0; }
bool has_test(std::string_view name) { return predicates().count(name) != 0 || tests().count(name) != 0; }

Value apply_filter(std::string_view name, const Value& subject, CallArgs& args) {
  const auto at = filters().find(name);
  if (at == filters().end())
    throw EvalError(unsupported_message("map()", "the '" + std::string(name) + "' filter"));
  return at->second(subject, args);
}

bool apply_test(std::string_view name, const Value& subject, CallArgs& args) {
  if (const auto predicate = predicates().find(name); predicate != predicates().end()) {
    no_arguments(args, predicate->first.data());
    return predicate->second(subject);
  }
  const auto at = tests().find(name);
  if (at == tests().end())
    throw EvalError(unsupported_message("select()", "the '" + std::string(name) + "' test"));
  return at->second(subject, args);
}

}  // namespace shardkit::chat
