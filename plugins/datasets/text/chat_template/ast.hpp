// The syntax tree of a chat template: expressions and statements, as the parser makes them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat_template/value.hpp"

namespace shardkit::chat {

/// An expression. Its operands, by kind:
///   Literal: value.  Name: text.  List, Tuple: args = items.  Dict: args = key, value, key, value...
///   Attribute: args[0] = object, text = attribute.  Item: args = object, key.
///   Slice: args = object, start, stop, step (null where left out).
///   Call: args[0] = callee, then the arguments, names[i] = args[i]'s keyword ("" when positional).
///   Filter, Test: text = name, args[0] = subject, then arguments as for Call; `negated` for `is not`.
///   Unary: text = "-", "+" or "not", args[0].  Binary: text = operator ("+", "~", "and"...), args = left, right.
///   Compare: args = operands, names[i] = the operator before args[i] ("==", "<", "in", "not in"...).
///   Conditional: args = condition, value if true, value if false (null when there is no else).
struct Expr {
  enum class Kind : std::uint8_t {
    Literal, Name, List, Tuple, Dict, Attribute, Item, Slice, Call, Filter, Test, Unary, Binary, Compare, Conditional
  };
  Kind kind = Kind::Literal;
  int line = 0;
  std::string text;
  Value value;
  std::vector<std::unique_ptr<Expr>> args;
  std::vector<std::string> names;
  bool negated = false;
};
using ExprPtr = std::unique_ptr<Expr>;

/// A statement. Its parts, by kind:
///   Text: text.  Output: expr.  If: expr = condition, body, orelse (an elif is one If in orelse).
///   For: names = targets, expr = iterable, filter = the inline `if` (may be null), body, orelse.
///   Set: names = targets (several: unpacking), expr; attribute set for `ns.attribute` (names[0] = ns).
///   SetBlock: names[0] = target, body.  Macro: text = name, names = parameters, defaults (null where
///   none), body.  CallBlock: expr = the call, body = what caller() renders.  Generation: body.
///   Break, Continue.
struct Node {
  enum class Kind : std::uint8_t {
    Text, Output, If, For, Set, SetBlock, Macro, CallBlock, Generation, Break, Continue
  };
  Kind kind = Kind::Text;
  int line = 0;
  std::string text;
  std::string attribute;
  std::vector<std::string> names;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<ExprPtr> defaults;
  std::vector<Node> body;
  std::vector<Node> orelse;
};

}  // namespace shardkit::chat
