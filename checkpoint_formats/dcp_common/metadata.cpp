// The shared parts of the DCP metadata codec: the accepted names, UTF-8 check, Metadata::find.
#include "shardkit/dcp/metadata.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <string>

#include "pickle_ops.hpp"
#include "pickle_value.hpp"

namespace shardkit::dcp {

MetadataError::~MetadataError() = default;

namespace {

// The names torch 2.15's dtypes pickle as (dtype.__reduce__()), sorted for binary search.
// Aliases ("float", "half", "long", ...) pickle under these names too, so they never appear.
// clang-format off
constexpr std::array<std::string_view, 47> kDtypes = {
    "bcomplex32", "bfloat16", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool",
    "complex128", "complex32", "complex64", "float16", "float32", "float4_e2m1fn_x2", "float64",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "int1", "int16", "int2", "int3", "int32", "int4", "int5", "int6", "int64", "int7", "int8",
    "qint32", "qint8", "quint2x4", "quint4x2", "quint8",
    "uint1", "uint16", "uint2", "uint3", "uint32", "uint4", "uint5", "uint6", "uint64", "uint7",
    "uint8",
};
// clang-format on

constexpr std::array<std::string_view, 8> kLayouts = {
    "_mkldnn",    "jagged",     "sparse_bsc", "sparse_bsr",
    "sparse_coo", "sparse_csc", "sparse_csr", "strided",
};

static_assert(std::is_sorted(kDtypes.begin(), kDtypes.end()));
static_assert(std::is_sorted(kLayouts.begin(), kLayouts.end()));

}  // namespace

bool is_known_dtype(std::string_view name) {
  return std::binary_search(kDtypes.begin(), kDtypes.end(), name);
}

const StorageMetadata* Metadata::find(std::string_view fqn) const {
  for (const auto& [key, value] : state_dict_metadata) {
    if (key == fqn) return &value;
  }
  return nullptr;
}

namespace detail {

bool is_known_layout(std::string_view name) {
  return std::binary_search(kLayouts.begin(), kLayouts.end(), name);
}

bool resolve_global(std::string_view module, std::string_view name, GlobalKind& kind) {
  struct Entry {
    std::string_view name;
    GlobalKind kind;
  };
  static constexpr Entry kMetadataClasses[] = {
      {"Metadata", GlobalKind::Metadata},
      {"TensorStorageMetadata", GlobalKind::TensorStorageMetadata},
      {"TensorProperties", GlobalKind::TensorProperties},
      {"ChunkStorageMetadata", GlobalKind::ChunkStorageMetadata},
      {"BytesStorageMetadata", GlobalKind::BytesStorageMetadata},
      {"MetadataIndex", GlobalKind::MetadataIndex},
      {"StorageMeta", GlobalKind::StorageMeta},
      {"_MEM_FORMAT_ENCODING", GlobalKind::MemFormatEncoding},
  };
  if (module == kMetadataModule) {
    for (const auto& e : kMetadataClasses) {
      if (e.name == name) {
        kind = e.kind;
        return true;
      }
    }
    return false;
  }
  if (module == kFilesystemModule && name == "_StorageInfo")
    return kind = GlobalKind::StorageInfo, true;
  if (module == kSerializationModule && name == "_get_layout")
    return kind = GlobalKind::GetLayout, true;
  if (module == "torch") {
    if (name == "Size") return kind = GlobalKind::TorchSize, true;
    if (is_known_dtype(name)) return kind = GlobalKind::Dtype, true;
    if (is_known_layout(name)) return kind = GlobalKind::Layout, true;
    return false;
  }
  // pathlib._local: where Python 3.13 defines the path classes.
  if ((module == "pathlib" || module == "pathlib._local") &&
      (name == "PosixPath" || name == "PurePosixPath")) {
    return kind = GlobalKind::PosixPath, true;
  }
  if (module == "collections" && name == "OrderedDict") return kind = GlobalKind::OrderedDict, true;
  return false;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Global: return "global";
    case Kind::Object: return "object";
  }
  return "?";
}

const char* global_kind_name(GlobalKind kind) {
  // In GlobalKind's order.
  // clang-format off
  static constexpr const char* kNames[] = {
      "Metadata", "TensorStorageMetadata", "TensorProperties", "ChunkStorageMetadata",
      "BytesStorageMetadata", "MetadataIndex", "StorageMeta", "_MEM_FORMAT_ENCODING",
      "_StorageInfo", "torch.serialization._get_layout", "torch.Size", "a torch dtype",
      "a torch layout", "pathlib.PosixPath", "collections.OrderedDict"};
  // clang-format on
  static_assert(std::size(kNames) == static_cast<std::size_t>(GlobalKind::OrderedDict) + 1);
  return kNames[static_cast<std::size_t>(kind)];
}

std::size_t utf8_error(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = p[i];
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong 3-byte forms; surrogates (0xED A0..BF) pass
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::string printable(std::string_view s, std::size_t max_bytes) {
  const bool utf8 = utf8_error(s) == std::string_view::npos;
  std::size_t n = std::min(s.size(), max_bytes);
  while (utf8 && n < s.size() && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F || (!utf8 && c >= 0x80)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (n < s.size()) out += "...";
  return out;
}

}  // namespace detail
}  // namespace shardkit::dcp
