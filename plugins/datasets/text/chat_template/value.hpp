// The values a chat template computes with: Python's None, bool, int, float, str, list, tuple and dict,
// and Jinja's undefined, namespace() objects and callables (macros, globals, bound methods).
#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace shardkit::chat {

class Dict;
struct Namespace;
struct Callable;

/// One template value. Cheap to copy: lists and dicts are shared and never change once made (the
/// sandbox transformers renders in forbids changing them); a namespace is shared and does change.
class Value {
 public:
  enum class Kind : std::uint8_t { Undefined, None, Bool, Int, Float, String, List, Tuple, Dict, Namespace, Callable };

  Value() = default;  ///< None
  template <typename B, typename = std::enable_if_t<std::is_same_v<B, bool>>>
  Value(B b) : kind_(Kind::Bool), data_(static_cast<bool>(b)) {}
  Value(std::int64_t i) : kind_(Kind::Int), data_(i) {}
  Value(int i) : Value(static_cast<std::int64_t>(i)) {}
  Value(double d) : kind_(Kind::Float), data_(d) {}
  Value(std::string s) : kind_(Kind::String), data_(std::move(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::vector<Value> items, bool tuple = false);
  Value(Dict d);
  Value(std::shared_ptr<Namespace> ns);
  Value(std::shared_ptr<const Callable> fn);
  /// Jinja's Undefined. `message` is the error its use raises ("'x' is undefined").
  static Value undefined(std::string message);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Bool || kind_ == Kind::Int || kind_ == Kind::Float; }
  bool is_sequence() const { return kind_ == Kind::List || kind_ == Kind::Tuple; }

  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const;  ///< a Bool or Int
  double as_float() const;      ///< any number
  const std::string& as_string() const { return std::get<std::string>(data_); }  ///< also Undefined's message
  const std::vector<Value>& as_list() const;  ///< a List or Tuple
  const Dict& as_dict() const;
  Namespace& as_namespace() const;
  const Callable& as_callable() const;

 private:
  Kind kind_ = Kind::None;
  std::variant<std::monostate, bool, std::int64_t, double, std::string, std::shared_ptr<const std::vector<Value>>,
               std::shared_ptr<const Dict>, std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>
      data_;
};

using List = std::vector<Value>;

/// A dict with str keys that keeps insertion order, as Python's does.
class Dict {
 public:
  /// The value under `key`, or null.
  const Value* find(std::string_view key) const;
  /// Sets `key`: in place when present, else appended.
  void set(std::string key, Value value);
  /// Appends `key`, which must not be present.
  void append(std::string key, Value value) { entries_.emplace_back(std::move(key), std::move(value)); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<std::string, Value>> entries_;
};

/// The arguments of a call, as written: positional, then keyword.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

/// Something a template can call.
struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> call;
};

/// A namespace() object: the one value a template changes (`{% set ns.x = ... %}`).
struct Namespace {
  Dict attributes;
};

/// Python's bool(v); undefined is false.
bool truthy(const Value& v);
/// Python's ==; undefined equals only undefined.
bool equals(const Value& a, const Value& b);
/// -1, 0 or 1 as Python's < orders two strs, lists or tuples; EvalError for other pairs.
int compare(const Value& a, const Value& b);
/// Python's str(v) as Jinja prints it: undefined is "", None is "None", a list is its repr().
std::string to_str(const Value& v);
/// Python's repr(v).
std::string repr(const Value& v);
/// Python's repr() of a float ("1.0", "0.1", "1e+16").
std::string float_repr(double d);
/// Python's name of v's type ("str", "NoneType"...), for error messages.
std::string type_name(const Value& v);
/// A JSON value as Python's json.loads gives it. EvalError for an integer beyond 64 bits.
Value from_json(const boost::json::value& v);

/// The arguments of `args` matched to the parameters `params` of `function` as Python matches them:
/// one pointer per parameter, null where it was not given. EvalError for an unknown keyword or too
/// many arguments.
std::vector<const Value*> bind(const CallArgs& args, std::initializer_list<std::string_view> params,
                               std::string_view function);

}  // namespace shardkit::chat
