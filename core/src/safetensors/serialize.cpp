// The safetensors writer's layout: tensor order, header JSON and padding, as the reference's.
#include <algorithm>
#include <cstring>
#include <set>

#include "format_internal.hpp"
#include "shardkit/error.hpp"

namespace shardkit::safetensors::detail {

namespace {

// Tensor order follows the reference's `prepare` (safetensors/src/tensor.rs, checked on
// safetensors 0.8.0): sort by its Dtype enum order descending (roughly "largest alignment
// first"), then by name ascending, bytewise. These ranks are that enum's order restricted to
// shardkit's dtypes; it differs from DType's own order (F8 sits between I8 and I16 there).
int reference_rank(DType dtype) {
  switch (dtype) {
    case DType::BOOL: return 0;
    case DType::U8: return 1;
    case DType::I8: return 2;
    case DType::F8_E5M2: return 3;
    case DType::F8_E4M3: return 4;
    case DType::I16: return 5;
    case DType::U16: return 6;
    case DType::F16: return 7;
    case DType::BF16: return 8;
    case DType::I32: return 9;
    case DType::U32: return 10;
    case DType::F32: return 11;
    case DType::F64: return 12;
    case DType::I64: return 13;
    case DType::U64: return 14;
  }
  return 0;
}

void require_utf8(const std::string& text, const std::string& where, const std::string& what) {
  if (invalid_utf8_offset(text.data(), text.size()) != text.size()) {
    throw FormatError(where + ": " + what +
                      " is not valid UTF-8; safetensors headers are UTF-8 JSON");
  }
}

}  // namespace

// Escapes as serde_json's compact writer does, so headers match the reference byte for
// byte: \" \\ \b \f \n \r \t, other control bytes as \u00xx, everything else verbatim.
void append_json_string(std::string* out, const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

Prepared prepare(const std::vector<TensorRef>& tensors,
                 const std::map<std::string, std::string>& metadata, const std::string& where,
                 bool require_data) {
  Prepared prepared;
  std::set<std::string> seen;
  for (const TensorRef& t : tensors) {
    if (t.name == "__metadata__") {
      throw FormatError(where +
                        ": a tensor cannot be called '__metadata__' (the header reserves it)");
    }
    require_utf8(t.name, where, "tensor name '" + t.name + "'");
    if (!seen.insert(t.name).second) {
      throw FormatError(where + ": tensor '" + t.name + "' is given twice; names must be unique");
    }
    std::uint64_t nbytes = 0;
    if (!checked_nbytes(t.shape, t.dtype, &nbytes)) {
      throw FormatError(where + ": tensor '" + t.name + "' has shape " + shape_text(t.shape) +
                        " with a negative dimension or a byte size that overflows 64 bits");
    }
    if (nbytes != t.nbytes) {
      throw FormatError(where + ": tensor '" + t.name + "' has " + std::to_string(t.nbytes) +
                        " bytes but shape " + shape_text(t.shape) + " of " + dtype_name(t.dtype) +
                        " needs " + std::to_string(nbytes));
    }
    if (require_data && t.nbytes > 0 && t.data == nullptr) {
      throw FormatError(where + ": tensor '" + t.name + "' has " + std::to_string(t.nbytes) +
                        " bytes but a null data pointer");
    }
    prepared.order.push_back(&t);
  }
  for (const auto& [key, value] : metadata) {
    require_utf8(key, where, "metadata key '" + key + "'");
    require_utf8(value, where, "metadata value of '" + key + "'");
  }
  std::sort(prepared.order.begin(), prepared.order.end(),
            [](const TensorRef* a, const TensorRef* b) {
              const int ra = reference_rank(a->dtype), rb = reference_rank(b->dtype);
              return ra != rb ? ra > rb : a->name < b->name;
            });

  std::string json = "{";
  if (!metadata.empty()) {  // the reference omits the key when there is no metadata
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) json += ',';
      first = false;
      append_json_string(&json, key);
      json += ':';
      append_json_string(&json, value);
    }
    json += '}';
  }
  std::uint64_t offset = 0;
  for (const TensorRef* t : prepared.order) {
    if (json.size() > 1) json += ',';
    append_json_string(&json, t->name);
    json += ":{\"dtype\":\"";
    json += dtype_name(t->dtype);
    json += "\",\"shape\":[";
    for (std::size_t i = 0; i < t->shape.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(t->shape[i]);
    }
    json += "],\"data_offsets\":[" + std::to_string(offset) + ',';
    offset += t->nbytes;
    json += std::to_string(offset) + "]}";
  }
  json += '}';
  json.resize((json.size() + 7) / 8 * 8, ' ');  // the reference pads to a multiple of 8
  if (json.size() > kMaxHeaderSize) {
    throw FormatError(where + ": the header would be " + std::to_string(json.size()) +
                      " bytes, over the " + std::to_string(kMaxHeaderSize) +
                      "-byte limit readers enforce; split the tensors over several files");
  }

  const std::uint64_t n = json.size();
  prepared.head.resize(8 + json.size());
  for (int i = 0; i < 8; ++i) prepared.head[i] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(prepared.head.data() + 8, json.data(), json.size());
  prepared.data_size = offset;
  return prepared;
}

}  // namespace shardkit::safetensors::detail

namespace shardkit::safetensors {

std::vector<std::uint8_t> serialize(const std::vector<TensorRef>& tensors,
                                    const std::map<std::string, std::string>& metadata) {
  detail::Prepared prepared = detail::prepare(tensors, metadata, "safetensors::serialize");
  std::vector<std::uint8_t> out = std::move(prepared.head);
  out.reserve(out.size() + prepared.data_size);
  for (const TensorRef* t : prepared.order) {
    const auto* bytes = static_cast<const std::uint8_t*>(t->data);
    if (t->nbytes) out.insert(out.end(), bytes, bytes + t->nbytes);
  }
  return out;
}

}  // namespace shardkit::safetensors
