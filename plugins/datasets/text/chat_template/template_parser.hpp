// The chat template parser's state, shared by the statement and expression halves of its work
// (parse_statements.cpp, parse_expressions.cpp); parser.hpp is its interface.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/ast.hpp"
#include "chat_template/errors.hpp"
#include "chat_template/lexer.hpp"
#include "shardkit/error.hpp"

namespace shardkit::chat::parsing {

using EK = Expr::Kind;
using NK = Node::Kind;
using Ends = std::initializer_list<std::string_view>;

/// An expression node of `kind` at `line`.
ExprPtr make(EK kind, int line, std::string text = {});
/// A literal `v`.
ExprPtr literal(int line, Value v);
/// `left op right`.
ExprPtr binary(std::string op, ExprPtr left, ExprPtr right);
/// How an error names token `t` ("the end of the template", "'%}'", "a string", ...).
std::string describe(const Token& t);

/// A recursive-descent parser over one template's tokens.
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
  std::vector<Node> parse_body(Ends ends, std::string_view opener);

  // A body that runs as a function of its own (macro, caller, generation block): break and continue
  // cannot reach a loop outside it.
  std::vector<Node> parse_function_body(Ends ends, std::string_view opener, bool captures);

  // After `{% end... %}`'s name.
  void close_block();

  Node parse_statement();

  // A statement node of `kind` at the word it consumes (if, for, set, ...).
  Node statement(NK kind);
  // An optional `{% else %}` branch of `n` up to `{% <end> %}`, then that closing tag.
  void parse_else(Node& n, std::string_view end, std::string_view opener);
  Node parse_if();

  Node parse_for();

  Node parse_set();

  Node parse_macro();

  Node parse_call_block();

  // transformers' extension: the output of the body is the assistant's, for return_assistant_tokens_mask.
  Node parse_generation();

  // --- expressions

  // Expressions separated by commas: a tuple when there is a comma.
  ExprPtr parse_tuple(bool condexpr = true);

  ExprPtr parse_expression(bool condexpr = true);

  ExprPtr parse_or();

  ExprPtr parse_and();

  ExprPtr parse_not();

  ExprPtr parse_compare();

  ExprPtr parse_math1();

  ExprPtr parse_concat();

  ExprPtr parse_math2();

  ExprPtr parse_pow();

  ExprPtr parse_unary(bool with_filters = true);

  ExprPtr parse_primary();

  // Expressions separated by commas up to `close`; a trailing comma is allowed.
  void parse_items(std::vector<ExprPtr>& items, std::string_view close);

  ExprPtr parse_parenthesized();

  ExprPtr parse_postfix(ExprPtr e);

  ExprPtr parse_subscript(ExprPtr object);

  // `(arguments)` after a callee, filter or test, into e.args and e.names after the subject.
  void parse_arguments(Expr& e);

  ExprPtr parse_filters(ExprPtr e);

  ExprPtr parse_test(ExprPtr subject);

  // map('name'), select('name'), selectattr('attribute', 'name') name a filter or test when run:
  // a name written as a literal is checked now, like a filter written with '|'.
  void check_named_filter_or_test(const Expr& filter, const Token& at) const;

  // One level of nesting (a body, an expression, a unary operator) while alive; past kMaxNesting
  // the template is refused, so that parsing never exhausts the stack.
  class Nested {
   public:
    explicit Nested(Parser& parser) : parser_(parser) {
      if (++parser_.nesting_ > kMaxNesting)
        parser_.fail(parser_.peek(), "statements and expressions nest more than " + std::to_string(kMaxNesting) +
                                         " deep");
    }
    ~Nested() { --parser_.nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  const std::string& name_;
  std::size_t pos_ = 0;
  int loop_depth_ = 0;     // for loops open around the statement being parsed
  int capture_depth_ = 0;  // macros, call and set blocks open around it
  bool in_generation_ = false;
  int nesting_ = 0;
};

}  // namespace shardkit::chat::parsing
