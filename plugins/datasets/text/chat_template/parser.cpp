// Parses a chat template's tokens into statements (see parser.hpp). Precedence is Jinja's, loosest
// first: inline if, or, and, not, comparisons, + -, ~, * / // %, **, unary - +, filters and tests,
// then . [] () after a primary. The parser's state: template_parser.hpp.
#include "chat_template/parser.hpp"

#include "chat_template/template_parser.hpp"

namespace shardkit::chat {
namespace parsing {
ExprPtr make(EK kind, int line, std::string text) {
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

}  // namespace parsing

std::vector<Node> parse_template(std::string_view source, const std::string& name) {
  return parsing::Parser(tokenize(source, name), name).parse();
}

}  // namespace shardkit::chat
