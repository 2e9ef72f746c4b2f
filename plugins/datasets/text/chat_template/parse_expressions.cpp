// The chat template parser's expressions, loosest binding first (see parser.cpp's header).
#include <set>

#include "chat_template/builtins.hpp"
#include "chat_template/template_parser.hpp"

namespace shardkit::chat::parsing {
namespace {

// The attributes of a for loop's `loop` the renderer provides (not loop.cycle() or loop.changed()).
const std::set<std::string_view> kLoopAttributes = {"index",    "index0",   "revindex", "revindex0", "first", "last",
                                                    "length",   "previtem", "nextitem", "depth",     "depth0"};
const std::set<std::string_view> kUnsupportedGlobals = {"lipsum", "cycler", "joiner"};

}  // namespace

// Expressions separated by commas: a tuple when there is a comma.
ExprPtr Parser::parse_tuple(bool condexpr) {
  const int line = peek().line;
  auto first = parse_expression(condexpr);
  if (!at_op(",")) return first;
  auto tuple = make(EK::Tuple, line);
  tuple->args.push_back(std::move(first));
  while (skip_op(",")) {
    const auto t = peek().type;
    if (t == TokenType::VariableEnd || t == TokenType::BlockEnd || at_name("if")) break;
    tuple->args.push_back(parse_expression(condexpr));
  }
  return tuple;
}

ExprPtr Parser::parse_expression(bool condexpr) {
  const Nested nested(*this);
  auto e = parse_or();
  while (condexpr && at_name("if")) {
    auto conditional = make(EK::Conditional, next().line);
    conditional->args.push_back(parse_or());
    conditional->args.push_back(std::move(e));
    conditional->args.push_back(skip_name("else") ? parse_expression() : nullptr);
    e = std::move(conditional);
  }
  return e;
}

ExprPtr Parser::parse_or() {
  auto e = parse_and();
  while (skip_name("or")) e = binary("or", std::move(e), parse_and());
  return e;
}

ExprPtr Parser::parse_and() {
  auto e = parse_not();
  while (skip_name("and")) e = binary("and", std::move(e), parse_not());
  return e;
}

ExprPtr Parser::parse_not() {
  const Nested nested(*this);
  if (!at_name("not")) return parse_compare();
  auto e = make(EK::Unary, next().line, "not");
  e->args.push_back(parse_not());
  return e;
}

ExprPtr Parser::parse_compare() {
  auto first = parse_math1();
  ExprPtr compare;
  for (;;) {
    std::string op;
    const Token& t = peek();
    if (t.type == TokenType::Operator &&
        (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">="))
      op = next().text;
    else if (skip_name("in"))
      op = "in";
    else if (at_name("not") && at_name("in", 1) && skip_name("not") && skip_name("in"))
      op = "not in";
    else
      break;
    if (!compare) {
      compare = make(EK::Compare, first->line);
      compare->names.emplace_back();
      compare->args.push_back(std::move(first));
    }
    compare->names.push_back(op);
    compare->args.push_back(parse_math1());
  }
  return compare ? std::move(compare) : std::move(first);
}

ExprPtr Parser::parse_math1() {
  auto e = parse_concat();
  while (at_op("+") || at_op("-")) {
    std::string op = next().text;
    e = binary(std::move(op), std::move(e), parse_concat());
  }
  return e;
}

ExprPtr Parser::parse_concat() {
  auto e = parse_math2();
  while (skip_op("~")) e = binary("~", std::move(e), parse_math2());
  return e;
}

ExprPtr Parser::parse_math2() {
  auto e = parse_pow();
  while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
    std::string op = next().text;
    e = binary(std::move(op), std::move(e), parse_pow());
  }
  return e;
}

ExprPtr Parser::parse_pow() {
  auto e = parse_unary();
  while (skip_op("**")) e = binary("**", std::move(e), parse_unary());
  return e;
}

ExprPtr Parser::parse_unary(bool with_filters) {
  const Nested nested(*this);
  ExprPtr e;
  if (at_op("-") || at_op("+")) {
    const Token& sign = next();
    e = make(EK::Unary, sign.line, sign.text);
    e->args.push_back(parse_unary(false));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  return with_filters ? parse_filters(std::move(e)) : std::move(e);
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  if (t.type == TokenType::Name) {
    next();
    if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False")
      return literal(t.line, Value(t.text == "true" || t.text == "True"));
    if (t.text == "none" || t.text == "None") return literal(t.line, Value());
    if (kUnsupportedGlobals.count(t.text)) refuse(t, "the global '" + t.text + "'");
    return make(EK::Name, t.line, t.text);
  }
  if (t.type == TokenType::String) {  // adjacent literals join, as in Python
    std::string s = next().text;
    while (peek().type == TokenType::String) s += next().text;
    return literal(t.line, Value(std::move(s)));
  }
  if (t.type == TokenType::Integer) return literal(next().line, Value(t.integer));
  if (t.type == TokenType::Float) return literal(next().line, Value(t.number));
  if (at_op("(")) return parse_parenthesized();
  if (at_op("[")) {
    auto list = make(EK::List, next().line);
    parse_items(list->args, "]");
    return list;
  }
  if (at_op("{")) {
    auto dict = make(EK::Dict, next().line);
    while (!skip_op("}")) {
      if (!dict->args.empty()) {
        expect_op(",");
        if (skip_op("}")) break;
      }
      dict->args.push_back(parse_expression());
      expect_op(":");
      dict->args.push_back(parse_expression());
    }
    return dict;
  }
  fail(t, "expected an expression here, found " + describe(t));
}

// Expressions separated by commas up to `close`; a trailing comma is allowed.
void Parser::parse_items(std::vector<ExprPtr>& items, std::string_view close) {
  while (!skip_op(close)) {
    if (!items.empty()) {
      expect_op(",");
      if (skip_op(close)) break;
    }
    items.push_back(parse_expression());
  }
}

ExprPtr Parser::parse_parenthesized() {
  const int line = next().line;
  if (skip_op(")")) return make(EK::Tuple, line);
  auto first = parse_expression();
  if (skip_op(")")) return first;
  auto tuple = make(EK::Tuple, line);
  tuple->args.push_back(std::move(first));
  while (!skip_op(")")) {
    expect_op(",");
    if (skip_op(")")) break;
    tuple->args.push_back(parse_expression());
  }
  return tuple;
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  for (;;) {
    if (skip_op(".")) {
      const Token& t = peek();
      if (t.type == TokenType::Integer) {  // x.0 is x[0]
        auto item = make(EK::Item, next().line);
        item->args.push_back(std::move(e));
        item->args.push_back(literal(t.line, Value(t.integer)));
        e = std::move(item);
        continue;
      }
      const std::string attribute = expect_name();
      if (e->kind == EK::Name && e->text == "loop" && !kLoopAttributes.count(attribute))
        refuse(t, "loop." + attribute);
      if (at_op("(") && !has_method(attribute)) refuse(t, "the method " + attribute + "()");
      auto a = make(EK::Attribute, t.line, attribute);
      a->args.push_back(std::move(e));
      e = std::move(a);
    } else if (at_op("[")) {
      e = parse_subscript(std::move(e));
    } else if (at_op("(")) {
      auto call = make(EK::Call, peek().line);
      call->args.push_back(std::move(e));
      call->names.emplace_back();
      parse_arguments(*call);
      e = std::move(call);
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr object) {
  const int line = next().line;
  ExprPtr parts[3];
  bool slice = false;
  if (!at_op(":")) parts[0] = parse_expression();
  if (skip_op(":")) {
    slice = true;
    if (!at_op("]") && !at_op(":")) parts[1] = parse_expression();
    if (skip_op(":") && !at_op("]")) parts[2] = parse_expression();
  }
  if (at_op(",")) refuse(peek(), "a subscript with several indexes");
  expect_op("]");
  auto e = make(slice ? EK::Slice : EK::Item, line);
  e->args.push_back(std::move(object));
  for (int i = 0; i < (slice ? 3 : 1); ++i) e->args.push_back(std::move(parts[i]));
  return e;
}

// `(arguments)` after a callee, filter or test, into e.args and e.names after the subject.
void Parser::parse_arguments(Expr& e) {
  next();
  bool keywords = false;
  while (!skip_op(")")) {
    if (e.args.size() > 1) {
      expect_op(",");
      if (skip_op(")")) break;
    }
    if (at_op("*") || at_op("**")) refuse(peek(), "*args and **kwargs in a call");
    if (peek().type == TokenType::Name && at_op("=", 1)) {
      keywords = true;
      e.names.push_back(next().text);
      next();
    } else {
      if (keywords) fail(peek(), "a positional argument follows a keyword argument");
      e.names.emplace_back();
    }
    e.args.push_back(parse_expression());
  }
}

ExprPtr Parser::parse_filters(ExprPtr e) {
  for (;;) {
    if (skip_op("|")) {
      const Token& t = peek();
      const std::string name = expect_name();
      if (!has_filter(name)) refuse(t, "the '" + name + "' filter");
      auto filter = make(EK::Filter, t.line, name);
      filter->args.push_back(std::move(e));
      filter->names.emplace_back();
      if (at_op("(")) parse_arguments(*filter);
      check_named_filter_or_test(*filter, t);
      e = std::move(filter);
    } else if (skip_name("is")) {
      e = parse_test(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_test(ExprPtr subject) {
  const bool negated = skip_name("not");
  const Token& t = peek();
  const std::string name = expect_name();
  if (!has_test(name)) refuse(t, "the '" + name + "' test");
  auto test = make(EK::Test, t.line, name);
  test->negated = negated;
  test->args.push_back(std::move(subject));
  test->names.emplace_back();
  const auto type = peek().type;
  if (at_op("(")) {
    parse_arguments(*test);
  } else if ((type == TokenType::Name || type == TokenType::String || type == TokenType::Integer ||
              type == TokenType::Float || at_op("[") || at_op("{")) &&
             !at_name("else") && !at_name("or") && !at_name("and")) {  // `x is divisibleby 3`
    if (at_name("is")) fail(peek(), "tests cannot be chained with 'is'");
    test->args.push_back(parse_postfix(parse_primary()));
    test->names.emplace_back();
  }
  return test;
}

void Parser::check_named_filter_or_test(const Expr& filter, const Token& at) const {
  const auto literal_name = [&](std::size_t i) -> const std::string* {
    if (i >= filter.args.size() || !filter.names[i].empty()) return nullptr;
    const Expr& arg = *filter.args[i];
    return arg.kind == EK::Literal && arg.value.is_string() ? &arg.value.as_string() : nullptr;
  };
  const std::string& f = filter.text;
  if (f == "map") {
    if (const auto* name = literal_name(1); name && !has_filter(*name)) refuse(at, "the '" + *name + "' filter");
  } else if (f == "select" || f == "reject" || f == "selectattr" || f == "rejectattr") {
    const auto* name = literal_name(f == "selectattr" || f == "rejectattr" ? 2 : 1);
    if (name && !has_test(*name)) refuse(at, "the '" + *name + "' test");
  }
}

}  // namespace shardkit::chat::parsing
