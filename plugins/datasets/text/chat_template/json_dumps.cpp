// Python's json.dumps of a template value (see json_dumps.hpp).
#include "chat_template/json_dumps.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat_template/errors.hpp"
#include "chat_template/text.hpp"

namespace shardkit::chat {
namespace {

void append_hex(std::string& out, unsigned unit) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit);
  out += buf;
}

void dump_string(std::string& out, const std::string& s, bool ascii) {
  out += '"';
  const auto escape = [&out](char32_t c) {
    switch (c) {
      case '"': out += "\\\""; return true;
      case '\\': out += "\\\\"; return true;
      case '\b': out += "\\b"; return true;
      case '\f': out += "\\f"; return true;
      case '\n': out += "\\n"; return true;
      case '\r': out += "\\r"; return true;
      case '\t': out += "\\t"; return true;
      default: if (c >= 0x20) return false; append_hex(out, static_cast<unsigned>(c)); return true;
    }
  };
  if (!ascii) {
    for (const char c : s)
      if (!escape(static_cast<unsigned char>(c))) out += c;
  } else {
    for (const char32_t c : decode_utf8(s)) {
      if (escape(c)) continue;
      if (c < 0x7F) {
        out += static_cast<char>(c);
      } else if (c < 0x10000) {
        append_hex(out, static_cast<unsigned>(c));
      } else {  // a UTF-16 surrogate pair, as Python writes it
        append_hex(out, 0xD800 + ((c - 0x10000) >> 10));
        append_hex(out, 0xDC00 + ((c - 0x10000) & 0x3FF));
      }
    }
  }
  out += '"';
}

void dump(std::string& out, const Value& v, const JsonFormat& f, int level) {
  const auto open = [&](char bracket) {
    out += bracket;
    if (f.indent) {
      out += '\n';
      for (int i = 0; i <= level; ++i) out += *f.indent;
    }
  };
  const auto separate = [&] {
    out += f.item_separator;
    if (f.indent) {
      out += '\n';
      for (int i = 0; i <= level; ++i) out += *f.indent;
    }
  };
  const auto close = [&](char bracket) {
    if (f.indent) {
      out += '\n';
      for (int i = 0; i < level; ++i) out += *f.indent;
    }
    out += bracket;
  };
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      const double d = v.as_float();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
      return;
    }
    case Value::Kind::String: dump_string(out, v.as_string(), f.ensure_ascii); return;
    case Value::Kind::List:
    case Value::Kind::Tuple: {
      const auto& items = v.as_list();
      if (items.empty()) {
        out += "[]";
        return;
      }
      open('[');
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) separate();
        dump(out, items[i], f, level + 1);
      }
      close(']');
      return;
    }
    case Value::Kind::Dict: {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.as_dict().entries()) entries.push_back(&e);
      if (entries.empty()) {
        out += "{}";
        return;
      }
      if (f.sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
      open('{');
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) separate();
        dump_string(out, entries[i]->first, f.ensure_ascii);
        out += f.key_separator;
        dump(out, entries[i]->second, f, level + 1);
      }
      close('}');
      return;
    }
    default: throw EvalError("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

std::string json_dumps(const Value& v, const JsonFormat& format) {
  std::string out;
  dump(out, v, format, 0);
  return out;
}

}  // namespace shardkit::chat
