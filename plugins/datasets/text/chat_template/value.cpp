// Template values: truth, equality, ordering, str() and repr() as Python has them (see value.hpp).
#include "chat_template/value.hpp"

#include <algorithm>
#include <boost/json/value.hpp>
#include <charconv>
#include <cmath>
#include <limits>

#include "chat_template/errors.hpp"
#include "chat_template/text.hpp"

namespace shardkit::chat {

Value::Value(std::vector<Value> items, bool tuple)
    : kind_(tuple ? Kind::Tuple : Kind::List), data_(std::make_shared<const std::vector<Value>>(std::move(items))) {}
Value::Value(Dict d) : kind_(Kind::Dict), data_(std::make_shared<const Dict>(std::move(d))) {}
Value::Value(std::shared_ptr<Namespace> ns) : kind_(Kind::Namespace), data_(std::move(ns)) {}
Value::Value(std::shared_ptr<const Callable> fn) : kind_(Kind::Callable), data_(std::move(fn)) {}

Value Value::undefined(std::string message) {
  Value v(std::move(message));
  v.kind_ = Kind::Undefined;
  return v;
}

std::int64_t Value::as_int() const {
  return kind_ == Kind::Bool ? std::get<bool>(data_) : std::get<std::int64_t>(data_);
}
double Value::as_float() const {
  return kind_ == Kind::Float ? std::get<double>(data_) : static_cast<double>(as_int());
}
const std::vector<Value>& Value::as_list() const { return *std::get<std::shared_ptr<const std::vector<Value>>>(data_); }
const Dict& Value::as_dict() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
Namespace& Value::as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(data_); }
const Callable& Value::as_callable() const { return *std::get<std::shared_ptr<const Callable>>(data_); }

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string key, Value value) {
  for (auto& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::Int: return v.as_int() != 0;
    case Value::Kind::Float: return v.as_float() != 0.0;
    case Value::Kind::String: return !v.as_string().empty();
    case Value::Kind::List:
    case Value::Kind::Tuple: return !v.as_list().empty();
    case Value::Kind::Dict: return v.as_dict().size() != 0;
    case Value::Kind::Namespace:
    case Value::Kind::Callable: return true;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == K::Float || b.kind() == K::Float) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.as_string() == b.as_string();
    case K::List:
    case K::Tuple:
      return std::equal(a.as_list().begin(), a.as_list().end(), b.as_list().begin(), b.as_list().end(), equals);
    case K::Dict: {
      const auto& x = a.as_dict();
      const auto& y = b.as_dict();
      if (x.size() != y.size()) return false;
      return std::all_of(x.entries().begin(), x.entries().end(), [&y](const auto& e) {
        const Value* other = y.find(e.first);
        return other && equals(e.second, *other);
      });
    }
    case K::Namespace: return &a.as_namespace() == &b.as_namespace();
    case K::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) {  // UTF-8 byte order is code point order
    const int c = a.as_string().compare(b.as_string());
    return (c > 0) - (c < 0);
  }
  if (a.is_number() && b.is_number()) {
    if (a.kind() != Value::Kind::Float && b.kind() != Value::Kind::Float)
      return (a.as_int() > b.as_int()) - (a.as_int() < b.as_int());
    const double x = a.as_float(), y = b.as_float();
    return (x > y) - (x < y);
  }
  if (a.kind() == b.kind() && a.is_sequence()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equals(x[i], y[i])) return compare(x[i], y[i]);
    return (x.size() > y.size()) - (x.size() < y.size());
  }
  throw EvalError("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific).ptr;
  // buf is "[-]D[.DDD]e(+|-)XX": the shortest digits that read back as d, and the exponent.
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  std::string out;
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const auto e = text.find('e');
  std::string digits;
  for (const char c : text.substr(0, e))
    if (c != '.') digits += c;
  const int exponent = std::stoi(std::string(text.substr(e + 1)));
  const int point = exponent + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {  // Python's repr switches to exponents outside this range
    if (point <= 0) return out + "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    if (point >= n) return out + digits + std::string(static_cast<std::size_t>(point - n), '0') + ".0";
    return out + digits.substr(0, point) + "." + digits.substr(point);
  }
  out += digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  const int shown = point - 1;
  const std::string magnitude = std::to_string(std::abs(shown));
  return out + (shown < 0 ? "e-" : "e+") + (magnitude.size() < 2 ? "0" : "") + magnitude;
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.as_bool() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return float_repr(v.as_float());
    case Value::Kind::String: return v.as_string();
    case Value::Kind::Namespace: return "<Namespace " + repr(Value(v.as_namespace().attributes)) + ">";
    case Value::Kind::Callable:
      throw EvalError("'" + v.as_callable().name + "' is a function: call it instead of printing it");
    default: return repr(v);
  }
}

std::string repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::String: return repr_string(v.as_string());
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      const bool tuple = v.kind() == Value::Kind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (const auto& item : v.as_list()) out += (out.size() > 1 ? ", " : "") + repr(item);
      if (tuple && v.as_list().size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    case Value::Kind::Dict: {
      std::string out = "{";
      for (const auto& [k, item] : v.as_dict().entries())
        out += (out.size() > 1 ? ", " : "") + repr_string(k) + ": " + repr(item);
      return out + "}";
    }
    default: return to_str(v);
  }
}

std::string type_name(const Value& v) {
  static constexpr const char* kNames[] = {"Undefined", "NoneType", "bool", "int",       "float",   "str",
                                           "list",      "tuple",    "dict", "Namespace", "function"};
  return kNames[static_cast<int>(v.kind())];
}

Value from_json(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return Value();
    case boost::json::kind::bool_: return Value(v.get_bool());
    case boost::json::kind::int64: return Value(static_cast<std::int64_t>(v.get_int64()));
    case boost::json::kind::uint64:
      if (v.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw EvalError("the integer " + std::to_string(v.get_uint64()) + " does not fit the renderer's 64-bit ints");
      return Value(static_cast<std::int64_t>(v.get_uint64()));
    case boost::json::kind::double_: return Value(v.get_double());
    case boost::json::kind::string: return Value(std::string(v.get_string()));
    case boost::json::kind::array: {
      List items;
      items.reserve(v.get_array().size());
      for (const auto& item : v.get_array()) items.push_back(from_json(item));
      return Value(std::move(items));
    }
    case boost::json::kind::object: {
      Dict d;
      for (const auto& entry : v.get_object()) d.append(std::string(entry.key()), from_json(entry.value()));
      return Value(std::move(d));
    }
  }
  return Value();
}

std::vector<const Value*> bind(const CallArgs& args, std::initializer_list<std::string_view> params,
                               std::string_view function) {
  if (args.positional.size() > params.size())
    throw EvalError(std::string(function) + "() takes at most " + std::to_string(params.size()) + " argument(s) (" +
                    std::to_string(args.positional.size()) + " given)");
  std::vector<const Value*> out(params.size(), nullptr);
  for (std::size_t i = 0; i < args.positional.size(); ++i) out[i] = &args.positional[i];
  for (const auto& [name, value] : args.keyword) {
    const auto at = std::find(params.begin(), params.end(), name);
    if (at == params.end())
      throw EvalError(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
    auto& slot = out[static_cast<std::size_t>(at - params.begin())];
    if (slot) throw EvalError(std::string(function) + "() got multiple values for argument '" + name + "'");
    slot = &value;
  }
  return out;
}

}  // namespace shardkit::chat
