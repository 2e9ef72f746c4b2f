// Python literals (what ast.literal_eval reads) as JSON values: how AITraining reads a conversation
// stored as a string in a CSV cell.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace shardkit::text {

/// The value of `text`, a Python literal: strings ('...', "...", '''...''', with Python's escapes,
/// u and r prefixes, adjacent ones joined), decimal integers, floats, True, False, None, lists, tuples (as arrays) and dicts with
/// string keys. nullopt when `text` is not one such literal; `problem` then says where and why.
std::optional<boost::json::value> parse_python_literal(std::string_view text, std::string& problem);

}  // namespace shardkit::text
