// Validation of a safetensors file image: every rule the reference implementation checks.
#include <algorithm>
#include <boost/json/kind.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "format_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit::safetensors::detail {

namespace {

namespace json = boost::json;

// The dtypes the reference knows that shardkit cannot hold, to tell "unsupported" from
// "garbage" in the message.
constexpr const char* kReferenceOnlyDTypes[] = {"F4",          "F6_E2M3",     "F6_E3M2", "F8_E8M0",
                                                "F8_E4M3FNUZ", "F8_E5M2FNUZ", "C64"};

class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const std::string& what) const { throw FormatError(path_ + ": " + what); }

  [[noreturn]] void fail_tensor(const std::string& name, const std::string& what) const {
    fail("tensor '" + name + "' " + what);
  }

  static std::string kind_text(const json::value& v) {
    return std::string(json::to_string(v.kind()));
  }

  // A JSON number that is an integer in [0, INT64_MAX] (what the reference's usize takes,
  // bounded so a shape fits an int64 dimension).
  static bool non_negative_int(const json::value& v, std::uint64_t* out) {
    if (v.is_int64() && v.get_int64() >= 0) {
      *out = static_cast<std::uint64_t>(v.get_int64());
      return true;
    }
    if (v.is_uint64()) {
      *out = v.get_uint64();
      return true;
    }
    return false;
  }

  static std::string value_text(const json::value& v) {
    std::string text = json::serialize(v);
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
  }

  void read_metadata(const json::value& v, std::map<std::string, std::string>* out) const {
    if (v.is_null()) return;  // the reference reads `null` as "no metadata"
    if (!v.is_object()) {
      fail("__metadata__ must be a JSON object mapping strings to strings, not a " + kind_text(v));
    }
    for (const auto& kv : v.get_object()) {
      if (!kv.value().is_string()) {
        fail("__metadata__ must map strings to strings, but key '" + std::string(kv.key()) +
             "' has a " + kind_text(kv.value()) + " value");
      }
      (*out)[std::string(kv.key())] = std::string(kv.value().get_string());
    }
  }

  Entry read_entry(const std::string& name, const json::value& v) const {
    if (!v.is_object()) {
      fail_tensor(name,
                  "must be a JSON object {dtype, shape, data_offsets}, not a " + kind_text(v));
    }
    const json::object& obj = v.get_object();
    // The reference (serde) ignores unknown fields in a tensor entry; shardkit refuses them,
    // so a header that would mean something else to another reader is never half-understood.
    for (const auto& kv : obj) {
      if (kv.key() != "dtype" && kv.key() != "shape" && kv.key() != "data_offsets") {
        fail_tensor(name, "has unknown field '" + std::string(kv.key()) +
                              "' (a tensor entry has exactly dtype, shape and data_offsets)");
      }
    }
    for (const char* field : {"dtype", "shape", "data_offsets"}) {
      if (!obj.contains(field)) {
        fail_tensor(name, std::string("is missing field '") + field +
                              "' (a tensor entry has exactly dtype, shape and data_offsets)");
      }
    }
    Entry entry{name, read_dtype(name, obj.at("dtype")), read_shape(name, obj.at("shape")), 0, 0};
    read_offsets(name, obj.at("data_offsets"), &entry);
    return entry;
  }

  Header check(const std::uint8_t* bytes, std::size_t size) const {
    if (size < 8) {
      fail("file is " + std::to_string(size) +
           " bytes, too short for the 8-byte little-endian header length every safetensors "
           "file starts with");
    }
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
    if (n > kMaxHeaderSize) {
      fail("header length " + std::to_string(n) + " exceeds the limit of " +
           std::to_string(kMaxHeaderSize) + " bytes (not a safetensors file, or corrupt)");
    }
    if (n > size - 8) {
      fail("header length " + std::to_string(n) + " needs at least " + std::to_string(n + 8) +
           " bytes but the file has only " + std::to_string(size) + " (truncated file?)");
    }
    const char* text = reinterpret_cast<const char*>(bytes + 8);
    const std::size_t bad = invalid_utf8_offset(text, n);
    if (bad != n) {
      fail("header is not valid UTF-8 (bad byte at header offset " + std::to_string(bad) + ")");
    }

    json::monotonic_resource arena;
    json::parser parser;
    parser.reset(&arena);
    json::error_code ec;
    const std::size_t used = parser.write(text, n, ec);
    if (ec) {
      fail("header is not valid JSON (at header offset " + std::to_string(used) +
           "): " + ec.message());
    }
    const json::value root = parser.release();
    if (!root.is_object()) fail("header must be a JSON object, not a " + kind_text(root));

    Header header;
    header.data_start = static_cast<std::size_t>(8 + n);
    for (const auto& kv : root.get_object()) {
      const std::string name(kv.key());
      if (name == "__metadata__") {
        read_metadata(kv.value(), &header.metadata);
      } else {
        header.entries.push_back(read_entry(name, kv.value()));
      }
    }
    check_layout(&header.entries, size - header.data_start);
    return header;
  }

 private:
  DType read_dtype(const std::string& name, const json::value& v) const {
    if (!v.is_string())
      fail_tensor(name, "has a dtype that is a " + kind_text(v) + ", not a string");
    const std::string text(v.get_string());
    if (auto dtype = parse_dtype(text)) return *dtype;
    for (const char* other : kReferenceOnlyDTypes) {
      if (text == other) {
        fail_tensor(name, "has dtype '" + text + "', which shardkit does not support");
      }
    }
    std::string known;
    for (DType d : kAllDTypes) known += std::string(known.empty() ? "" : ", ") + dtype_name(d);
    fail_tensor(name, "has unknown dtype '" + text + "' (known: " + known + ")");
  }

  std::vector<int64_t> read_shape(const std::string& name, const json::value& v) const {
    if (!v.is_array())
      fail_tensor(name, "has a shape that is a " + kind_text(v) + ", not an array");
    std::vector<int64_t> shape;
    for (const json::value& dim : v.get_array()) {
      std::uint64_t d = 0;
      if (!non_negative_int(dim, &d)) {
        fail_tensor(name, "has shape entry " + value_text(dim) + ", not a non-negative integer");
      }
      if (d > static_cast<std::uint64_t>(INT64_MAX)) {
        fail_tensor(name, "has shape dimension " + std::to_string(d) + ", larger than 2^63-1");
      }
      shape.push_back(static_cast<int64_t>(d));
    }
    return shape;
  }

  void read_offsets(const std::string& name, const json::value& v, Entry* entry) const {
    const json::array* arr = v.if_array();
    if (!arr || arr->size() != 2 || !non_negative_int((*arr)[0], &entry->begin) ||
        !non_negative_int((*arr)[1], &entry->end)) {
      fail_tensor(name, "has data_offsets " + value_text(v) +
                            "; expected [begin, end], two non-negative integers");
    }
    if (entry->begin > entry->end) {
      fail_tensor(name, "has data_offsets [" + std::to_string(entry->begin) + ", " +
                            std::to_string(entry->end) + "] whose begin is after its end");
    }
  }

  // Sorted by offsets (as the reference does: writers may list entries in any order), the
  // entries must tile the data section exactly.
  void check_layout(std::vector<Entry>* entries, std::size_t data_size) const {
    std::stable_sort(entries->begin(), entries->end(), [](const Entry& a, const Entry& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t expected = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : *entries) {
      const std::string offsets =
          "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
      if (e.begin != expected) {
        if (!previous) {
          fail_tensor(e.name, "has data_offsets " + offsets +
                                  " but the first tensor must start at offset 0 (gap at the "
                                  "start of the data section)");
        }
        fail_tensor(e.name, "has data_offsets " + offsets +
                                (e.begin > expected ? " leaving a gap after" : " overlapping") +
                                " tensor '" + previous->name + "', which ends at " +
                                std::to_string(expected) + " (tensors must be contiguous)");
      }
      std::uint64_t nbytes = 0;
      if (!checked_nbytes(e.shape, e.dtype, &nbytes)) {
        fail_tensor(e.name, "has shape " + shape_text(e.shape) + " of " + dtype_name(e.dtype) +
                                " whose byte size overflows 64 bits");
      }
      if (e.end - e.begin != nbytes) {
        fail_tensor(e.name, "has data_offsets " + offsets + " but shape " + shape_text(e.shape) +
                                " of " + dtype_name(e.dtype) + " needs " + std::to_string(nbytes) +
                                " bytes");
      }
      expected = e.end;
      previous = &e;
    }
    if (expected != data_size) {
      fail("tensors cover " + std::to_string(expected) +
           " bytes but the data section after the header has " + std::to_string(data_size) +
           (expected < data_size ? " (trailing bytes after the last tensor)"
                                 : " (missing bytes: truncated file?)"));
    }
  }

  const std::string& path_;
};

}  // namespace

Header parse_header(const std::uint8_t* bytes, std::size_t size, const std::string& path) {
  return Checker(path).check(bytes, size);
}

}  // namespace shardkit::safetensors::detail
