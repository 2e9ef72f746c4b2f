// Python's operators on template values (see operators.hpp).
#include "chat_template/operators.hpp"

#include <cmath>
#include <limits>

#include "chat_template/builtins.hpp"
#include "chat_template/errors.hpp"

namespace shardkit::chat {
namespace {

using K = Value::Kind;

void require_defined(const Value& v) {
  if (v.is_undefined()) throw EvalError(v.as_string());
}

[[noreturn]] void unsupported_operands(std::string_view op, const Value& a, const Value& b) {
  throw EvalError("unsupported operand type(s) for " + std::string(op) + ": '" + type_name(a) + "' and '" +
                  type_name(b) + "'");
}

[[noreturn]] void overflow() {
  throw EvalError("integer overflow: the renderer keeps ints in 64 bits, Python does not");
}

std::int64_t multiply(std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(x, y, &r)) overflow();
  return r;
}

Value int_op(std::string_view op, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  if (op == "+" || op == "-") {
    if (op == "+" ? __builtin_add_overflow(x, y, &r) : __builtin_sub_overflow(x, y, &r)) overflow();
    return Value(r);
  }
  if (op == "*") return Value(multiply(x, y));
  if (op == "//" || op == "%") {
    if (y == 0) throw EvalError("integer division or modulo by zero");
    if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow();
    std::int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {  // Python rounds toward negative infinity
      --q;
      m += y;
    }
    return Value(op == "//" ? q : m);
  }
  // "**"
  if (y < 0 && x == 0) throw EvalError("0 cannot be raised to a negative power");
  if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
  std::int64_t result = 1;
  for (std::int64_t base = x; y > 0; y >>= 1) {
    if (y & 1) result = multiply(result, base);
    if (y > 1) base = multiply(base, base);
  }
  return Value(result);
}

Value float_op(std::string_view op, double x, double y) {
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "**") {
    if (x < 0 && y != std::floor(y)) throw EvalError("a negative number to a fractional power is complex in Python");
    if (x == 0 && y < 0) throw EvalError("0.0 cannot be raised to a negative power");
    return Value(std::pow(x, y));
  }
  if (y == 0) throw EvalError("float division or modulo by zero");
  // Python's float // and %: the remainder takes the divisor's sign.
  double m = std::fmod(x, y);
  double q = (x - m) / y;
  if (m != 0 && ((y < 0) != (m < 0))) {
    m += y;
    q -= 1.0;
  }
  if (op == "%") return Value(m != 0 ? m : std::copysign(0.0, y));
  if (q == 0) return Value(std::copysign(0.0, x / y));
  const double floor = std::floor(q);
  return Value(q - floor > 0.5 ? floor + 1.0 : floor);
}

// A str or list `seq` repeated `n` times.
Value repeat(const Value& seq, std::int64_t n) {
  const std::size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
  if (n > 0 && unit > 0 && static_cast<std::uint64_t>(n) > kMaxTemplateBytes / unit)
    throw EvalError("a repetition with * making more than 64 Mi items or bytes is refused");
  if (seq.is_string()) {
    std::string out;
    for (std::int64_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  List out;
  for (std::int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value(std::move(out), seq.kind() == K::Tuple);
}

bool is_int(const Value& v) { return v.kind() == K::Int || v.kind() == K::Bool; }

}  // namespace

Value binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") {
    auto left = to_str(a), right = to_str(b);
    check_size(left.size() + right.size(), "a string joined with ~");
    return Value(left + right);
  }
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (op == "/") {
      if (b.as_float() == 0) throw EvalError("division by zero");
      return Value(a.as_float() / b.as_float());
    }
    if (a.kind() == K::Float || b.kind() == K::Float) return float_op(op, a.as_float(), b.as_float());
    return int_op(op, a.as_int(), b.as_int());
  }
  if (op == "+" && a.kind() == b.kind() && a.is_string()) {
    check_size(a.as_string().size() + b.as_string().size(), "a string joined with +");
    return Value(a.as_string() + b.as_string());
  }
  if (op == "+" && a.kind() == b.kind() && a.is_sequence()) {
    check_size(a.as_list().size() + b.as_list().size(), "a list joined with +");
    List out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return Value(std::move(out), a.kind() == K::Tuple);
  }
  if (op == "*" && (a.is_string() || a.is_sequence()) && is_int(b)) return repeat(a, b.as_int());
  if (op == "*" && is_int(a) && (b.is_string() || b.is_sequence())) return repeat(b, a.as_int());
  if (op == "%" && a.is_string())
    throw EvalError("str % formatting is not supported by shardkit's chat template renderer");
  unsupported_operands(op, a, b);
}

Value unary_op(std::string_view op, const Value& v) {
  require_defined(v);
  if (v.kind() == K::Float) return Value(op == "-" ? -v.as_float() : v.as_float());
  if (!is_int(v)) throw EvalError("bad operand type for unary " + std::string(op) + ": '" + type_name(v) + "'");
  return op == "-" ? int_op("-", 0, v.as_int()) : Value(v.as_int());
}

bool compare_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "not in") return !contains(b, a);
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number() && (a.kind() == K::Float || b.kind() == K::Float)) {
    const double x = a.as_float(), y = b.as_float();  // NaN compares false, as in Python
    return op == "<" ? x < y : op == ">" ? x > y : op == "<=" ? x <= y : x >= y;
  }
  const int c = compare(a, b);
  return op == "<" ? c < 0 : op == ">" ? c > 0 : op == "<=" ? c <= 0 : c >= 0;
}

}  // namespace shardkit::chat
