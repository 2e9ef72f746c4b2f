// Reads a JSON configuration document into dotted keys, with line and column on errors.
//
// Boost.JSON's DOM parser (1.81) does not round doubles correctly, so this drives its
// SAX parser and converts each number's own text with std::from_chars: a value written
// by Config::to_json() reads back bit for bit.
#include <boost/json/basic_parser_impl.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/comma_list.hpp"
#include "shardkit/error.hpp"

namespace shardkit::config_detail {
namespace {

namespace json = boost::json;

class FlatteningHandler {
 public:
  static constexpr std::size_t max_array_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_object_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::size_t>::max();

  FlatteningHandler(RawConfig* out, std::string origin) : out_(out), origin_(std::move(origin)) {}

  /// Set when the document is valid JSON but not a valid configuration.
  const std::string& problem() const { return problem_; }
  /// The keys stored, in document order (one per scalar or array value).
  const std::vector<std::string>& stored() const { return stored_; }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }

  bool on_object_begin(json::error_code& ec) {
    if (in_array_) return fail(ec, "arrays may only hold strings");
    if (prefixes_.empty()) {
      prefixes_.push_back("");
    } else {
      prefixes_.push_back(key_ + ".");
    }
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    prefixes_.pop_back();
    return true;
  }

  bool on_array_begin(json::error_code& ec) {
    if (prefixes_.empty()) return fail_top(ec);
    if (in_array_) return fail(ec, "arrays may only hold strings (nested arrays are not allowed)");
    in_array_ = true;
    items_.clear();
    return true;
  }
  bool on_array_end(std::size_t, json::error_code& ec) {
    in_array_ = false;
    return store(ec, Value{join_list(items_, ",")});
  }

  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    text_.append(s.data(), s.size());
    key_ = prefixes_.back() + text_;
    text_.clear();
    if (key_.empty() || key_.back() == '.') return fail(ec, "empty keys are not allowed");
    return true;
  }

  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
    text_.append(s.data(), s.size());
    std::string value;
    value.swap(text_);
    if (in_array_) {
      items_.push_back(std::move(value));
      return true;
    }
    return store(ec, Value{std::move(value)});
  }

  bool on_number_part(json::string_view s, json::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) {
    text_.clear();
    return store(ec, Value{i});
  }
  bool on_uint64(std::uint64_t, json::string_view s, json::error_code& ec) {
    text_.append(s.data(), s.size());
    return fail(ec, "integer " + take_text() + " is out of the 64-bit signed range");
  }
  bool on_double(double, json::string_view s, json::error_code& ec) {
    text_.append(s.data(), s.size());
    const std::string number = take_text();
    double value = 0;
    const auto result = std::from_chars(number.data(), number.data() + number.size(), value);
    if (result.ec != std::errc() || result.ptr != number.data() + number.size() ||
        !std::isfinite(value)) {
      // from_chars reports underflow too; a value too small to represent is a user error
      // we would rather name than silently turn into 0.
      return fail(ec, "number " + number + " is out of the range of a double");
    }
    return store(ec, Value{value});
  }
  bool on_bool(bool b, json::error_code& ec) { return store(ec, Value{b}); }
  bool on_null(json::error_code& ec) {
    if (prefixes_.empty()) return fail_top(ec);
    return fail(ec, "null is not a value; remove the key to use its default");
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  std::string take_text() {
    std::string t;
    t.swap(text_);
    return t;
  }
  bool store(json::error_code& ec, Value value) {
    if (prefixes_.empty()) return fail_top(ec);
    if (in_array_) return fail(ec, "arrays may only hold strings");
    auto [it, inserted] = out_->emplace(key_, RawValue{std::move(value), origin_});
    if (!inserted) return fail(ec, "key given twice");
    stored_.push_back(key_);
    return true;
  }
  bool fail(json::error_code& ec, const std::string& what) {
    problem_ = "key '" + key_ + "': " + what;
    ec = json::error::syntax;
    return false;
  }
  bool fail_top(json::error_code& ec) {
    problem_ = "the document must be a JSON object ({\"key\": value, ...})";
    ec = json::error::syntax;
    return false;
  }

  RawConfig* out_;
  std::string origin_;
  std::vector<std::string> prefixes_;  // one per open object: "" then "optimizer." ...
  std::string key_;                    // full dotted key of the value being read
  std::string text_;                   // pieces of the current key, string or number
  bool in_array_ = false;
  std::vector<std::string> items_;
  std::string problem_;
  std::vector<std::string> stored_;
};

// Where each stored value of a document the parser accepted starts: scalars outside arrays
// and arrays, in document order, as FlatteningHandler stores them. The SAX parser reports
// no positions, so this walks the (already valid) text once more.
class ValuePositions {
 public:
  explicit ValuePositions(const std::string& text) : text_(text) { value(false); }
  const std::vector<std::size_t>& offsets() const { return offsets_; }

 private:
  void space() {
    while (i_ < text_.size() && std::string_view(" \t\r\n").find(text_[i_]) != std::string_view::npos) ++i_;
  }
  void string() {
    for (++i_; i_ < text_.size() && text_[i_] != '"'; ++i_)
      if (text_[i_] == '\\') ++i_;
    ++i_;
  }
  // Members of an object or items of an array, up to the closing bracket.
  void members(char close, bool keyed) {
    ++i_;
    while (true) {
      space();
      if (i_ >= text_.size() || text_[i_] == close) break;
      if (keyed) {
        string();
        space();
        ++i_;  // ':'
      }
      value(!keyed);
      space();
      if (i_ < text_.size() && text_[i_] == ',') ++i_;
    }
    ++i_;
  }
  void value(bool in_array) {
    space();
    if (i_ >= text_.size()) return;
    const char c = text_[i_];
    if (c == '{') return members('}', true);
    if (!in_array) offsets_.push_back(i_);
    if (c == '[') return members(']', false);
    if (c == '"') return string();
    while (i_ < text_.size() && std::string_view(",}] \t\r\n").find(text_[i_]) == std::string_view::npos) ++i_;
  }

  const std::string& text_;
  std::size_t i_ = 0;
  std::vector<std::size_t> offsets_;
};

// Boost.JSON calls most mistakes just "syntax error": name the character it stopped at.
std::string syntax_problem(const std::string& text, std::size_t offset, const json::error_code& ec) {
  if (ec != json::error::syntax || offset >= text.size()) return ec.message();
  const auto c = static_cast<unsigned char>(text[offset]);
  if (c >= 0x20 && c < 0x7f) return std::string("unexpected '") + text[offset] + "'";
  static const char* kHex = "0123456789abcdef";
  return std::string("unexpected byte 0x") + kHex[c >> 4] + kHex[c & 0xF] +
         (c >= 0x80 ? " (not valid UTF-8 here)" : "");
}

}  // namespace

RawConfig parse_json_document(const std::string& text, const std::string& name) {
  RawConfig out;
  json::basic_parser<FlatteningHandler> parser(json::parse_options{}, &out, name);
  json::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && consumed != text.size()) {
    const auto [line, column] = line_column(text, consumed);
    throw ConfigError(name + ":" + std::to_string(line) + ":" + std::to_string(column) +
                      ": JSON syntax error: unexpected text after the end of the document");
  }
  if (ec) {
    const auto [line, column] = line_column(text, consumed);
    const std::string& problem = parser.handler().problem();
    throw ConfigError(name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                      (problem.empty() ? "JSON syntax error: " + syntax_problem(text, consumed, ec)
                                       : problem));
  }
  // Each value's origin is its own position, so that a type error names its line and column.
  const auto& stored = parser.handler().stored();
  const ValuePositions positions(text);
  if (positions.offsets().size() == stored.size()) {
    for (std::size_t k = 0; k < stored.size(); ++k) {
      const auto [line, column] = line_column(text, positions.offsets()[k]);
      out.at(stored[k]).origin = name + ":" + std::to_string(line) + ":" + std::to_string(column);
    }
  }
  return out;
}

}  // namespace shardkit::config_detail
