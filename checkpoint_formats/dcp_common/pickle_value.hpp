// The object tree the restricted unpickler builds from a DCP `.metadata` pickle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardkit::dcp::detail {

// The only globals a DCP metadata pickle may name; anything else is refused while parsing.
enum class GlobalKind : std::uint8_t {
  Metadata,
  TensorStorageMetadata,
  TensorProperties,
  ChunkStorageMetadata,
  BytesStorageMetadata,
  MetadataIndex,
  StorageMeta,
  MemFormatEncoding,  // _MEM_FORMAT_ENCODING (an Enum)
  StorageInfo,        // filesystem._StorageInfo
  GetLayout,          // torch.serialization._get_layout
  TorchSize,          // torch.Size
  Dtype,              // torch.<dtype>
  Layout,             // torch.<layout>, as older torch pickled layouts
  PosixPath,          // pathlib.PosixPath
  OrderedDict,        // collections.OrderedDict (becomes a plain Dict)
};

enum class Kind : std::uint8_t {
  None,
  Bool,
  Int,
  Float,
  Str,
  Bytes,
  Tuple,
  List,
  Dict,
  Global,
  Object
};

// One Python object. Values live in the Unpickled arena and point at each other with raw
// pointers, so shared and even cyclic references (possible in hostile input) are harmless.
struct Value {
  Kind kind = Kind::None;
  std::size_t offset = 0;  // byte offset of the opcode that made it, for messages
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string text;                                // Str / Bytes payload; Global: module
  std::string name;                                // Global: attribute name
  GlobalKind global = GlobalKind::Metadata;        // Global
  std::vector<Value*> items;                       // Tuple, List
  std::vector<std::pair<Value*, Value*>> entries;  // Dict, in insertion order
  const Value* callable = nullptr;  // Object: the Global that NEWOBJ/REDUCE was given
  const Value* args = nullptr;      // Object: the argument tuple (never called)
  const Value* state = nullptr;     // Object: what BUILD gave it, if anything
  bool newobj = false;              // Object: made by NEWOBJ (dataclass) rather than REDUCE
};

struct Unpickled {
  std::vector<std::unique_ptr<Value>> arena;
  const Value* root = nullptr;
};

// Parses `bytes` (pickle protocols 2-5) into a Value tree. Nothing is imported or called.
// Throws MetadataError naming `file` and the byte offset for anything malformed, truncated
// or outside what DCP metadata uses.
Unpickled unpickle(std::string_view bytes, const std::string& file);

// The kind of the global `module.name` if DCP metadata may use it; false otherwise.
bool resolve_global(std::string_view module, std::string_view name, GlobalKind& kind);

// "str", "tuple", ... for messages.
const char* kind_name(Kind kind);

// "TensorStorageMetadata", "torch.Size", ... for messages.
const char* global_kind_name(GlobalKind kind);

}  // namespace shardkit::dcp::detail
