// What a template reaches besides its own statements: attribute and item lookup, the str and dict
// methods, and Jinja's filters and tests, as transformers' sandboxed environment offers them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat_template/value.hpp"

namespace shardkit::chat {

/// Whether the renderer has the filter `name` (the parser refuses the others).
bool has_filter(std::string_view name);
/// Whether the renderer has the test `name`.
bool has_test(std::string_view name);
/// Whether `name` is a str or dict method the renderer can call (strip, split, items, get...).
bool has_method(std::string_view name);

/// `subject | name(args)`.
Value apply_filter(std::string_view name, const Value& subject, CallArgs& args);
/// `subject is name(args)`.
bool apply_test(std::string_view name, const Value& subject, CallArgs& args);

/// Jinja's `object.name`: a str or dict method first, then a dict key or namespace attribute;
/// undefined when there is none. EvalError when `object` is undefined.
Value get_attribute(const Value& object, const std::string& name);
/// Jinja's `object[key]`: a list or str index or a dict key first, then an attribute named `key`;
/// undefined when there is none.
Value get_item(const Value& object, const Value& key);
/// Python's `object[start:stop:step]` of a list, tuple or str (null for a bound left out).
Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step);
/// What iterating `v` visits: a list's items, a dict's keys, a str's characters; nothing for undefined.
std::vector<Value> iterate(const Value& v);
/// Python's `item in container`.
bool contains(const Value& container, const Value& item);
/// Python's len(); 0 for undefined.
std::int64_t length(const Value& v);

}  // namespace shardkit::chat
