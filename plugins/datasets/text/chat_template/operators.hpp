// Python's operators on template values: arithmetic, ~, comparisons, `in`.
#pragma once

#include <string_view>

#include "chat_template/value.hpp"

namespace shardkit::chat {

/// `a op b` for op one of + - * / // % ** ~ with Python's results (int / int is a float, // and %
/// round toward negative infinity, str + int is an error). EvalError for unsupported operand types,
/// an undefined operand (except with ~, where it is ""), division by zero and int overflow.
Value binary_op(std::string_view op, const Value& a, const Value& b);
/// `-v` or `+v`.
Value unary_op(std::string_view op, const Value& v);
/// `a op b` for op one of == != < > <= >= in, "not in".
bool compare_op(std::string_view op, const Value& a, const Value& b);

}  // namespace shardkit::chat
