// Parses a chat template's tokens into statements (see parser.hpp). Precedence is Jinja's, loosest
// first: inline if, or, and, not, comparisons, + -, ~, * / // %, **, unary - +, filters and tests,
// then . [] () after a primary.
#include "chat_template/parser.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "chat_template/builtins.hpp"
#include "chat_template/errors.hpp"
#include "chat_template/lexer.hpp"
#include "shardkit/error.hpp"

namespace shardkit::chat {
namespace {

using EK = Expr::Kind;
using NK = Node::Kind;
using Ends = std::initializer_list<std::string_view>;

// The attributes of a for loop's `loop` the renderer provides (not loop.cycle() or loop.changed()).
const std::set<std::string_view> kLoopAttributes = {"index",    "index0",   "revindex", "revindex0", "first", "last",
                                                    "length",   "previtem", "nextitem", "depth",     "depth0"};
// Jinja statements and globals the renderer does not have.
const std::set<std::string_view> kUnsupportedStatements = {"include", "extends",  "block", "import",
                                                           "from",    "filter",   "with",  "autoescape"};
const std::set<std::string_view> kUnsupportedGlobals = {"lipsum", "cycler", "joiner"};

ExprPtr make(EK kind, int line, std::string text = {}) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  e->text = std::move(text);
  return e;
}

ExprPtr literal(int line, Value v) {
  auto e = make(EK::Literal, line);
  e->value = std::move(v);
  return e;
}

ExprPtr binary(std::string op, ExprPtr left, ExprPtr right) {
  auto e = make(EK::Binary, left->line, std::move(op));
  e->args.push_back(std::move(left));
  e->args.push_back(std::move(right));
  return e;
}

std::string describe(const Token& t) {
  switch (t.type) {
    case TokenType::End: return "the end of the template";
    case TokenType::Text: return "text";
    case TokenType::BlockBegin: return "'{%'";
    case TokenType::BlockEnd: return "'%}'";
    case TokenType::VariableBegin: return "'{{'";
    case TokenType::VariableEnd: return "'}}'";
    case TokenType::String: return "a string";
    case TokenType::Integer:
    case TokenType::Float: return "a number";
    default: return "'" + t.text + "'";
  }
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& name) : tokens_(std::move(tokens)), name_(name) {}

  std::vector<Node> parse() { return parse_body({}, ""); }

 private:
  // --- tokens
  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool at_op(std::string_view op, std::size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Operator && peek(ahead).text == op;
  }
  bool at_name(std::string_view word, std::size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Name && peek(ahead).text == word;
  }
  bool skip_op(std::string_view op) { return at_op(op) && (next(), true); }
  bool skip_name(std::string_view word) { return at_name(word) && (next(), true); }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail(peek(), "expected '" + std::string(op) + "' here, found " + describe(peek()));
  }
  std::string expect_name() {
    if (peek().type != TokenType::Name) fail(peek(), "expected a name here, found " + describe(peek()));
    return next().text;
  }
  void expect_block_end() {
    if (peek().type != TokenType::BlockEnd) fail(peek(), "expected '%}' here, found " + describe(peek()));
    next();
  }

  std::string where(const Token& t) const {
    return name_ + ":" + std::to_string(t.line) + ":" + std::to_string(t.column);
  }
  [[noreturn]] void fail(const Token& t, const std::string& what) const { throw ConfigError(where(t) + ": " + what); }
  [[noreturn]] void refuse(const Token& t, const std::string& construct) const {
    throw ConfigError(unsupported_message(where(t), construct));
  }

  // --- statements

  // Statements up to a `{% <one of ends> %}` tag, returned with that tag's name next; `opener` names
  // the block in the error when the template ends first.
  std::vector<Node> parse_body(Ends ends, std::string_view opener) {
    std::vector<Node> body;
    for (;;) {
      const Token& t = peek();
      if (t.type == TokenType::Text) {
        Node n;
        n.line = t.line;
        n.text = next().text;
        body.push_back(std::move(n));
      } else if (t.type == TokenType::VariableBegin) {
        next();
        Node n;
        n.kind = NK::Output;
        n.line = t.line;
        n.expr = parse_tuple();
        if (peek().type != TokenType::VariableEnd) fail(peek(), "expected '}}' here, found " + describe(peek()));
        next();
        body.push_back(std::move(n));
      } else if (t.type == TokenType::BlockBegin) {
        const Token& word = peek(1);
        next();
        if (word.type == TokenType::Name && std::find(ends.begin(), ends.end(), word.text) != ends.end()) return body;
        body.push_back(parse_statement());
      } else if (t.type == TokenType::End) {
        if (ends.size() != 0)
          fail(t, "the template ends inside {% " + std::string(opener) + " %}: {% " + std::string(*(ends.end() - 1)) +
                      " %} is missing");
        return body;
      } else {
        fail(t, "unexpected " + describe(t));
      }
    }
  }

  // A body that runs as a function of its own (macro, caller, generation block): break and continue
  // cannot reach a loop outside it.
  std::vector<Node> parse_function_body(Ends ends, std::string_view opener, bool captures) {
    const int loops = loop_depth_;
    loop_depth_ = 0;
    capture_depth_ += captures;
    auto body = parse_body(ends, opener);
    loop_depth_ = loops;
    capture_depth_ -= captures;
    return body;
  }

  // After `{% end... %}`'s name.
  void close_block() {
    next();
    expect_block_end();
  }

  Node parse_statement() {
    const Token& word = peek();
    if (word.type != TokenType::Name) fail(word, "expected a statement name after '{%', found " + describe(word));
    const std::string& w = word.text;
    if (w == "if") return parse_if();
    if (w == "for") return parse_for();
    if (w == "set") return parse_set();
    if (w == "macro") return parse_macro();
    if (w == "call") return parse_call_block();
    if (w == "generation") return parse_generation();
    if (w == "break" || w == "continue") {
      if (loop_depth_ == 0) fail(word, "{% " + w + " %} outside a for loop");
      Node n;
      n.kind = w == "break" ? NK::Break : NK::Continue;
      n.line = next().line;
      expect_block_end();
      return n;
    }
    if (kUnsupportedStatements.count(w)) refuse(word, "{% " + w + " %}");
    if (w.rfind("end", 0) == 0 || w == "elif" || w == "else") fail(word, "{% " + w + " %} closes no open block");
    fail(word, "unknown statement {% " + w + " %}");
  }

  Node parse_if() {
    Node n;
    n.kind = NK::If;
    n.line = next().line;  // `if` or `elif`
    n.expr = parse_expression(false);
    expect_block_end();
    n.body = parse_body({"elif", "else", "endif"}, "if");
    if (at_name("elif")) {
      n.orelse.push_back(parse_if());
      return n;
    }
    if (skip_name("else")) {
      expect_block_end();
      n.orelse = parse_body({"endif"}, "if");
    }
    close_block();
    return n;
  }

  Node parse_for() {
    Node n;
    n.kind = NK::For;
    n.line = next().line;
    const bool parenthesized = skip_op("(");
    n.names.push_back(expect_name());
    while (skip_op(",") && !at_name("in") && !at_op(")")) n.names.push_back(expect_name());
    if (parenthesized) expect_op(")");
    if (!skip_name("in")) fail(peek(), "expected 'in' here, found " + describe(peek()));
    n.expr = parse_tuple(false);
    if (skip_name("if")) n.filter = parse_expression();
    if (at_name("recursive")) refuse(peek(), "a recursive for loop");
    expect_block_end();
    ++loop_depth_;
    n.body = parse_body({"else", "endfor"}, "for");
    --loop_depth_;
    if (skip_name("else")) {
      expect_block_end();
      n.orelse = parse_body({"endfor"}, "for");
    }
    close_block();
    return n;
  }

  Node parse_set() {
    Node n;
    n.kind = NK::Set;
    n.line = next().line;
    n.names.push_back(expect_name());
    if (skip_op("."))
      n.attribute = expect_name();
    else
      while (skip_op(",")) n.names.push_back(expect_name());
    if (skip_op("=")) {
      n.expr = parse_tuple();
      expect_block_end();
      return n;
    }
    if (n.names.size() != 1 || !n.attribute.empty()) fail(peek(), "expected '=' here, found " + describe(peek()));
    if (at_op("|")) refuse(peek(), "a filter on a {% set %} block");
    expect_block_end();
    n.kind = NK::SetBlock;
    ++capture_depth_;
    n.body = parse_body({"endset"}, "set");
    --capture_depth_;
    close_block();
    return n;
  }

  Node parse_macro() {
    Node n;
    n.kind = NK::Macro;
    n.line = next().line;
    n.text = expect_name();
    expect_op("(");
    while (!skip_op(")")) {
      if (!n.names.empty()) expect_op(",");
      const Token& parameter = peek();
      n.names.push_back(expect_name());
      if (skip_op("="))
        n.defaults.push_back(parse_expression());
      else if (std::any_of(n.defaults.begin(), n.defaults.end(), [](const ExprPtr& d) { return d != nullptr; }))
        fail(parameter, "a parameter without a default follows one with a default");
      else
        n.defaults.push_back(nullptr);
    }
    expect_block_end();
    n.body = parse_function_body({"endmacro"}, "macro", true);
    close_block();
    return n;
  }

  Node parse_call_block() {
    Node n;
    n.kind = NK::CallBlock;
    n.line = next().line;
    if (at_op("(")) refuse(peek(), "caller() parameters ({% call(...) %})");
    const Token& start = peek();
    n.expr = parse_expression();
    if (n.expr->kind != EK::Call) fail(start, "{% call %} takes a macro call, as in {% call my_macro() %}");
    expect_block_end();
    n.body = parse_function_body({"endcall"}, "call", true);
    close_block();
    return n;
  }

  // transformers' extension: the output of the body is the assistant's, for return_assistant_tokens_mask.
  Node parse_generation() {
    const Token& word = next();
    if (capture_depth_ > 0 || in_generation_)
      refuse(word, "{% generation %} inside a macro, a {% call %} or {% set %} block, or another {% generation %}");
    Node n;
    n.kind = NK::Generation;
    n.line = word.line;
    expect_block_end();
    in_generation_ = true;
    n.body = parse_function_body({"endgeneration"}, "generation", false);
    in_generation_ = false;
    close_block();
    return n;
  }

  // --- expressions

  // Expressions separated by commas: a tuple when there is a comma.
  ExprPtr parse_tuple(bool condexpr = true) {
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

  ExprPtr parse_expression(bool condexpr = true) {
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

  ExprPtr parse_or() {
    auto e = parse_and();
    while (skip_name("or")) e = binary("or", std::move(e), parse_and());
    return e;
  }

  ExprPtr parse_and() {
    auto e = parse_not();
    while (skip_name("and")) e = binary("and", std::move(e), parse_not());
    return e;
  }

  ExprPtr parse_not() {
    if (!at_name("not")) return parse_compare();
    auto e = make(EK::Unary, next().line, "not");
    e->args.push_back(parse_not());
    return e;
  }

  ExprPtr parse_compare() {
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

  ExprPtr parse_math1() {
    auto e = parse_concat();
    while (at_op("+") || at_op("-")) {
      std::string op = next().text;
      e = binary(std::move(op), std::move(e), parse_concat());
    }
    return e;
  }

  ExprPtr parse_concat() {
    auto e = parse_math2();
    while (skip_op("~")) e = binary("~", std::move(e), parse_math2());
    return e;
  }

  ExprPtr parse_math2() {
    auto e = parse_pow();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      std::string op = next().text;
      e = binary(std::move(op), std::move(e), parse_pow());
    }
    return e;
  }

  ExprPtr parse_pow() {
    auto e = parse_unary();
    while (skip_op("**")) e = binary("**", std::move(e), parse_unary());
    return e;
  }

  ExprPtr parse_unary(bool with_filters = true) {
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

  ExprPtr parse_primary() {
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
  void parse_items(std::vector<ExprPtr>& items, std::string_view close) {
    while (!skip_op(close)) {
      if (!items.empty()) {
        expect_op(",");
        if (skip_op(close)) break;
      }
      items.push_back(parse_expression());
    }
  }

  ExprPtr parse_parenthesized() {
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

  ExprPtr parse_postfix(ExprPtr e) {
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

  ExprPtr parse_subscript(ExprPtr object) {
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
  void parse_arguments(Expr& e) {
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

  ExprPtr parse_filters(ExprPtr e) {
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

  ExprPtr parse_test(ExprPtr subject) {
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

  // map('name'), select('name'), selectattr('attribute', 'name') name a filter or test when run:
  // a name written as a literal is checked now, like a filter written with '|'.
  void check_named_filter_or_test(const Expr& filter, const Token& at) const {
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

  std::vector<Token> tokens_;
  const std::string& name_;
  std::size_t pos_ = 0;
  int loop_depth_ = 0;     // for loops open around the statement being parsed
  int capture_depth_ = 0;  // macros, call and set blocks open around it
  bool in_generation_ = false;
};

}  // namespace

std::vector<Node> parse_template(std::string_view source, const std::string& name) {
  return Parser(tokenize(source, name), name).parse();
}

}  // namespace shardkit::chat
