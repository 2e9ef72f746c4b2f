// Attribute, item and slice lookup, iteration, `in` and len(), and the str and dict methods, as Jinja's
// sandboxed environment does them (see builtins.hpp).
#include "chat_template/builtins.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "chat_template/errors.hpp"
#include "chat_template/text.hpp"

namespace shardkit::chat {
namespace {

using K = Value::Kind;

const std::set<std::string_view> kStrMethods = {"strip",    "lstrip", "rstrip",     "split",   "rsplit",
                                                "startswith", "endswith", "upper",   "lower",   "title",
                                                "capitalize", "replace",  "join",    "find",    "count"};
const std::set<std::string_view> kDictMethods = {"items", "keys", "values", "get"};
// Python's other dict methods: the sandbox forbids those that change a dict; none is needed to read one.
const std::set<std::string_view> kOtherDictMethods = {"copy",   "pop",   "popitem", "setdefault",
                                                      "update", "clear", "fromkeys"};

// How Jinja names an object in "... has no attribute" messages.
std::string object_name(const Value& v) { return v.kind() == K::None ? "None" : "'" + type_name(v) + " object'"; }

const std::string& str_arg(const Value* v, const std::string& function) {
  if (!v) throw EvalError(function + "() is missing an argument");
  if (!v->is_string()) throw EvalError(function + "() argument must be str, not " + type_name(*v));
  return v->as_string();
}
const std::string* optional_str_arg(const Value* v, const std::string& function) {
  return v && v->kind() != K::None ? &str_arg(v, function) : nullptr;
}
std::int64_t int_arg(const Value* v, std::int64_t otherwise, const std::string& function) {
  if (!v) return otherwise;
  if (v->kind() != K::Int && v->kind() != K::Bool)
    throw EvalError(function + "() argument must be an int, not " + type_name(*v));
  return v->as_int();
}

// Python's startswith/endswith: `affix` is a str or a tuple of them.
bool has_affix(const std::string& s, const Value& affix, bool at_end, const std::string& function) {
  if (affix.kind() == K::Tuple)
    return std::any_of(affix.as_list().begin(), affix.as_list().end(),
                       [&](const Value& a) { return has_affix(s, a, at_end, function); });
  const std::string& a = str_arg(&affix, function);
  return a.size() <= s.size() && s.compare(at_end ? s.size() - a.size() : 0, a.size(), a) == 0;
}

Value str_method(const std::string& s, const std::string& name, CallArgs& args) {
  const std::string fn = "str." + name;
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const auto a = bind(args, {"chars"}, fn);
    return Value(strip(s, optional_str_arg(a[0], fn), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    const auto a = bind(args, {"sep", "maxsplit"}, fn);
    List parts;
    for (auto& part : split(s, optional_str_arg(a[0], fn), int_arg(a[1], -1, fn), name == "rsplit"))
      parts.emplace_back(std::move(part));
    return Value(std::move(parts));
  }
  if (name == "startswith" || name == "endswith") {
    const auto a = bind(args, {"prefix"}, fn);
    if (!a[0]) throw EvalError(fn + "() takes exactly one argument (0 given)");
    return Value(has_affix(s, *a[0], name == "endswith", fn));
  }
  if (name == "replace") {
    const auto a = bind(args, {"old", "new", "count"}, fn);
    return Value(replace(s, str_arg(a[0], fn), str_arg(a[1], fn), int_arg(a[2], -1, fn)));
  }
  if (name == "join") {
    const auto a = bind(args, {"iterable"}, fn);
    if (!a[0]) throw EvalError(fn + "() takes exactly one argument (0 given)");
    std::string out;
    std::size_t i = 0;
    for (const auto& item : iterate(*a[0])) {
      if (!item.is_string())
        throw EvalError("sequence item " + std::to_string(i) + ": expected str instance, " + type_name(item) + " found");
      if (i++) out += s;
      out += item.as_string();
    }
    return Value(std::move(out));
  }
  if (name == "find" || name == "count") {
    const auto a = bind(args, {"sub"}, fn);
    const std::string& sub = str_arg(a[0], fn);
    if (name == "find") {
      const auto at = s.find(sub);
      return Value(at == std::string::npos ? std::int64_t{-1}
                                           : static_cast<std::int64_t>(code_point_count(s.substr(0, at))));
    }
    if (sub.empty()) return Value(static_cast<std::int64_t>(code_point_count(s) + 1));
    std::int64_t n = 0;
    for (auto at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    return Value(n);
  }
  bind(args, {}, fn);
  static const std::map<std::string_view, Case> kCases = {
      {"upper", Case::Upper}, {"lower", Case::Lower}, {"title", Case::PythonTitle}, {"capitalize", Case::Capitalize}};
  return Value(change_case(s, kCases.at(name)));
}

Value dict_method(const Dict& d, const std::string& name, CallArgs& args) {
  const std::string fn = "dict." + name;
  if (name == "get") {
    const auto a = bind(args, {"key", "default"}, fn);
    if (!a[0]) throw EvalError("dict.get() takes at least 1 argument (0 given)");
    const Value* found = a[0]->is_string() ? d.find(a[0]->as_string()) : nullptr;
    return found ? *found : a[1] ? *a[1] : Value();
  }
  bind(args, {}, fn);
  List out;
  for (const auto& [key, value] : d.entries()) {
    if (name == "keys")
      out.emplace_back(key);
    else if (name == "values")
      out.push_back(value);
    else
      out.emplace_back(List{Value(key), value}, true);
  }
  return Value(std::move(out));
}

Value bound_method(const Value& object, const std::string& name) {
  auto fn = std::make_shared<Callable>();
  fn->name = name;
  fn->call = [object, name](CallArgs& args) {
    return object.is_string() ? str_method(object.as_string(), name, args) : dict_method(object.as_dict(), name, args);
  };
  return Value(std::shared_ptr<const Callable>(std::move(fn)));
}

// Python's reading of `index` into `n` items (negative counts from the end); nullopt when out of range.
std::optional<std::size_t> python_index(std::int64_t index, std::size_t n) {
  const auto size = static_cast<std::int64_t>(n);
  if (index < 0) index += size;
  return index >= 0 && index < size ? std::optional<std::size_t>(static_cast<std::size_t>(index)) : std::nullopt;
}

}  // namespace

bool has_method(std::string_view name) { return kStrMethods.count(name) || kDictMethods.count(name); }

Value get_attribute(const Value& object, const std::string& name) {
  switch (object.kind()) {
    case K::Undefined: throw EvalError(object.as_string());
    case K::String:
      if (kStrMethods.count(name)) return bound_method(object, name);
      break;
    case K::Dict:
      if (kDictMethods.count(name)) return bound_method(object, name);
      if (kOtherDictMethods.count(name))
        throw EvalError("the dict method " + name + "() is not supported by shardkit's chat template renderer");
      if (const Value* v = object.as_dict().find(name)) return *v;
      break;
    case K::Namespace:
      if (const Value* v = object.as_namespace().attributes.find(name)) return *v;
      break;
    default: break;
  }
  return Value::undefined(object_name(object) + " has no attribute '" + name + "'");
}

Value get_item(const Value& object, const Value& key) {
  const bool int_key = key.kind() == K::Int || key.kind() == K::Bool;
  switch (object.kind()) {
    case K::Undefined: throw EvalError(object.as_string());
    case K::List:
    case K::Tuple:
      if (const auto i = int_key ? python_index(key.as_int(), object.as_list().size()) : std::nullopt)
        return object.as_list()[*i];
      break;
    case K::String:
      if (int_key) {
        const auto chars = decode_utf8(object.as_string());
        if (const auto i = python_index(key.as_int(), chars.size())) return Value(encode_utf8(chars.substr(*i, 1)));
      }
      break;
    case K::Dict:
      if (key.is_string())
        if (const Value* v = object.as_dict().find(key.as_string())) return *v;
      break;
    default: break;
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(object_name(object) + " has no element " + repr(key));
}

Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step) {
  if (object.is_undefined()) throw EvalError(object.as_string());
  const auto bound = [](const Value* v) -> std::optional<std::int64_t> {
    if (!v || v->kind() == K::None) return std::nullopt;
    if (v->kind() != K::Int && v->kind() != K::Bool)
      throw EvalError("slice indices must be integers or None, not " + type_name(*v));
    return v->as_int();
  };
  const auto from = bound(start), to = bound(stop);
  const std::int64_t by = bound(step).value_or(1);
  if (by == 0) throw EvalError("slice step cannot be zero");
  const auto picked = [&](std::size_t count) {  // Python's slice.indices(), then the range
    const auto n = static_cast<std::int64_t>(count);
    const auto clamp = [&](std::optional<std::int64_t> v, std::int64_t otherwise) {
      if (!v) return otherwise;
      const std::int64_t i = *v < 0 ? *v + n : *v;
      return by > 0 ? std::clamp<std::int64_t>(i, 0, n) : std::clamp<std::int64_t>(i, -1, n - 1);
    };
    std::vector<std::size_t> out;
    const std::int64_t end = clamp(to, by > 0 ? n : -1);
    for (std::int64_t i = clamp(from, by > 0 ? 0 : n - 1); by > 0 ? i < end : i > end; i += by)
      out.push_back(static_cast<std::size_t>(i));
    return out;
  };
  if (object.is_sequence()) {
    List out;
    for (const auto i : picked(object.as_list().size())) out.push_back(object.as_list()[i]);
    return Value(std::move(out), object.kind() == K::Tuple);
  }
  if (object.is_string()) {
    const auto chars = decode_utf8(object.as_string());
    std::u32string out;
    for (const auto i : picked(chars.size())) out += chars[i];
    return Value(encode_utf8(out));
  }
  return Value::undefined(object_name(object) + " cannot be sliced");
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case K::Undefined: return {};
    case K::List:
    case K::Tuple: return v.as_list();
    case K::Dict: {
      std::vector<Value> keys;
      for (const auto& entry : v.as_dict().entries()) keys.emplace_back(entry.first);
      return keys;
    }
    case K::String: {
      std::vector<Value> chars;
      for (const char32_t c : decode_utf8(v.as_string())) chars.emplace_back(encode_utf8(std::u32string(1, c)));
      return chars;
    }
    default: throw EvalError("'" + type_name(v) + "' object is not iterable");
  }
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case K::Undefined: return false;
    case K::String:
      if (!item.is_string())
        throw EvalError("'in <string>' requires string as left operand, not " + type_name(item));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case K::List:
    case K::Tuple:
      return std::any_of(container.as_list().begin(), container.as_list().end(),
                         [&item](const Value& x) { return equals(x, item); });
    case K::Dict: return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
    default: throw EvalError("argument of type '" + type_name(container) + "' is not iterable");
  }
}

std::int64_t length(const Value& v) {
  switch (v.kind()) {
    case K::Undefined: return 0;
    case K::String: return static_cast<std::int64_t>(code_point_count(v.as_string()));
    case K::List:
    case K::Tuple: return static_cast<std::int64_t>(v.as_list().size());
    case K::Dict: return static_cast<std::int64_t>(v.as_dict().size());
    default: throw EvalError("object of type '" + type_name(v) + "' has no len()");
  }
}

}  // namespace shardkit::chat
