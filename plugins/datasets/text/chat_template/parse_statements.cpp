// The chat template parser's statements: bodies, if, for, set, macro, call and generation blocks.
#include <set>

#include "chat_template/template_parser.hpp"

namespace shardkit::chat::parsing {
namespace {

// Jinja statements and globals the renderer does not have.
const std::set<std::string_view> kUnsupportedStatements = {"include", "extends",  "block", "import",
                                                           "from",    "filter",   "with",  "autoescape"};

}  // namespace

// Statements up to a `{% <one of ends> %}` tag, returned with that tag's name next; `opener` names
// the block in the error when the template ends first.
std::vector<Node> Parser::parse_body(Ends ends, std::string_view opener) {
  const Nested nested(*this);
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
std::vector<Node> Parser::parse_function_body(Ends ends, std::string_view opener, bool captures) {
  const int loops = loop_depth_;
  loop_depth_ = 0;
  capture_depth_ += captures;
  auto body = parse_body(ends, opener);
  loop_depth_ = loops;
  capture_depth_ -= captures;
  return body;
}

// After `{% end... %}`'s name.
void Parser::close_block() {
  next();
  expect_block_end();
}

Node Parser::parse_statement() {
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
    Node n = statement(w == "break" ? NK::Break : NK::Continue);
    expect_block_end();
    return n;
  }
  if (kUnsupportedStatements.count(w)) refuse(word, "{% " + w + " %}");
  if (w.rfind("end", 0) == 0 || w == "elif" || w == "else") fail(word, "{% " + w + " %} closes no open block");
  fail(word, "unknown statement {% " + w + " %}");
}

Node Parser::statement(NK kind) {
  Node n;
  n.kind = kind;
  n.line = next().line;
  return n;
}

void Parser::parse_else(Node& n, std::string_view end, std::string_view opener) {
  if (skip_name("else")) {
    expect_block_end();
    n.orelse = parse_body({end}, opener);
  }
  close_block();
}

Node Parser::parse_if() {
  Node n = statement(NK::If);  // `if` or `elif`
  n.expr = parse_expression(false);
  expect_block_end();
  n.body = parse_body({"elif", "else", "endif"}, "if");
  if (at_name("elif")) {
    n.orelse.push_back(parse_if());
    return n;
  }
  parse_else(n, "endif", "if");
  return n;
}

Node Parser::parse_for() {
  Node n = statement(NK::For);
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
  parse_else(n, "endfor", "for");
  return n;
}

Node Parser::parse_set() {
  Node n = statement(NK::Set);
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

Node Parser::parse_macro() {
  Node n = statement(NK::Macro);
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

Node Parser::parse_call_block() {
  Node n = statement(NK::CallBlock);
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
Node Parser::parse_generation() {
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

}  // namespace shardkit::chat::parsing
