// PyTorch Distributed Checkpoint (DCP) `.metadata` files: C++ model and pickle codec, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "shardkit/error.hpp"

namespace shardkit::dcp {

/// A `.metadata` that cannot be read (malformed, truncated, a pickle global that DCP metadata
/// never uses) or a Metadata that cannot be written. The message names the file (when
/// reading), the byte offset or field, and what was wrong.
class MetadataError : public FormatError {
 public:
  using FormatError::FormatError;
  ~MetadataError() override;
};

/// The version string DCP 2.15 writes into `Metadata.version`.
inline constexpr std::string_view kDcpVersion = "1.0.0";

/// `torch.memory_format` as DCP stores it: the value of `_MEM_FORMAT_ENCODING`.
enum class MemoryFormat : std::int64_t {
  contiguous = 0,     ///< TORCH_CONTIGUOUS_FORMAT (what dcp.save always records)
  channels_last = 1,  ///< TORCH_CHANNELS_LAST
  preserve = 2,       ///< TORCH_PRESERVE_FORMAT
};

/// `TensorProperties`: how to create the tensor a TensorStorageMetadata describes.
struct TensorProperties {
  /// torch dtype name without "torch." ("float32", "bfloat16", "int64", ...).
  std::string dtype = "float32";
  /// torch layout name without "torch." ("strided", "sparse_coo", ...).
  std::string layout = "strided";
  bool requires_grad = false;                             ///< deprecated in DCP, still written
  MemoryFormat memory_format = MemoryFormat::contiguous;  ///< deprecated in DCP, still written
  bool pin_memory = false;                                ///< deprecated in DCP, still written
  /// Strides of the saved tensor; nullopt is Python None (files from torch before `strides`).
  std::optional<std::vector<std::int64_t>> strides;
  /// Field-wise equality.
  bool operator==(const TensorProperties&) const = default;
};

/// `ChunkStorageMetadata`: one saved piece of a tensor (an empty chunk has a 0 in `sizes`).
struct ChunkStorageMetadata {
  std::vector<std::int64_t> offsets;  ///< torch.Size: where the chunk starts in the full tensor
  std::vector<std::int64_t> sizes;    ///< torch.Size: extent of the chunk
  /// Field-wise equality.
  bool operator==(const ChunkStorageMetadata&) const = default;
};

/// `TensorStorageMetadata`: a tensor entry of the state dict.
struct TensorStorageMetadata {
  TensorProperties properties;               ///< dtype, layout, strides...
  std::vector<std::int64_t> size;            ///< torch.Size of the full tensor; empty for a scalar
  std::vector<ChunkStorageMetadata> chunks;  ///< the pieces written by the ranks, in order
  /// Field-wise equality.
  bool operator==(const TensorStorageMetadata&) const = default;
};

/// `BytesStorageMetadata`: a non-tensor entry (torch.save'd bytes, e.g. a param_groups value).
struct BytesStorageMetadata {
  /// Always equal: the Python class has no fields.
  bool operator==(const BytesStorageMetadata&) const = default;
};

/// One value of `Metadata.state_dict_metadata`.
using StorageMetadata = std::variant<TensorStorageMetadata, BytesStorageMetadata>;

/// One element of a planner_data path: a dict key (str) or a list index (int).
using PathComponent = std::variant<std::string, std::int64_t>;

/// `MetadataIndex`: key of `Metadata.storage_data`.
struct MetadataIndex {
  std::string fqn;  ///< flattened state-dict key, e.g. "model.layer.weight"
  /// torch.Size offset of the chunk; nullopt (the attribute left unset) for byte items.
  std::optional<std::vector<std::int64_t>> offset;
  /// Position of the chunk in TensorStorageMetadata::chunks; nullopt is None. Python's
  /// equality ignores it; this operator== compares it too.
  std::optional<std::int64_t> index;
  /// Field-wise equality (including `index`).
  bool operator==(const MetadataIndex&) const = default;
};

/// `torch.distributed.checkpoint.filesystem._StorageInfo`: where an item's bytes are.
struct StorageInfo {
  std::string relative_path;  ///< file in the checkpoint folder, e.g. "__0_0.distcp"
  std::int64_t offset = 0;    ///< first byte in that file
  std::int64_t length = 0;    ///< number of bytes
  /// Stream transforms (extensions) applied at save; nullopt (left out of the pickle) when none.
  std::optional<std::vector<std::string>> transform_descriptors;
  /// Field-wise equality.
  bool operator==(const StorageInfo&) const = default;
};

/// `StorageMeta`: facts about the save itself.
struct StorageMeta {
  /// The checkpoint folder as saved (an absolute path for FileSystemWriter); nullopt is None.
  std::optional<std::string> checkpoint_id;
  /// Whether checkpoint_id is pickled as pathlib.PosixPath (what FileSystemWriter writes)
  /// rather than as a str. A PosixPath reads back in its normalized form ("/a/b/" -> "/a/b").
  bool checkpoint_id_is_path = true;
  std::optional<std::string> save_id;  ///< uuid of the save; nullopt is None
  std::optional<std::string> load_id;  ///< None on disk (set by the reader in Python)
  std::vector<std::string> modules;    ///< `modules` field (an empty list from dcp.save)
  /// Field-wise equality.
  bool operator==(const StorageMeta&) const = default;
};

/// `Metadata`: the whole `.metadata` file. Every map keeps the file's (insertion) order.
struct Metadata {
  /// fqn -> tensor or bytes entry.
  std::vector<std::pair<std::string, StorageMetadata>> state_dict_metadata;
  /// The default planner's flatten mappings: fqn -> path in the nested state dict;
  /// nullopt is None (a planner that does not flatten).
  std::optional<std::vector<std::pair<std::string, std::vector<PathComponent>>>> planner_data;
  /// Where each item (tensor chunk or bytes) is stored; nullopt is None.
  std::optional<std::vector<std::pair<MetadataIndex, StorageInfo>>> storage_data;
  /// nullopt is None.
  std::optional<StorageMeta> storage_meta;
  /// "1.0.0" for 2.15 (kDcpVersion); nullopt is None.
  std::optional<std::string> version;

  /// The entry called `fqn`, or nullptr (a linear search).
  [[nodiscard]] const StorageMetadata* find(std::string_view fqn) const;
  /// Field-wise equality.
  bool operator==(const Metadata&) const = default;
};

/// Whether `name` is a torch dtype name the codec reads and writes ("float32", "bfloat16",
/// ...; the canonical names that `torch.<dtype>` pickles as, not aliases such as "float").
[[nodiscard]] bool is_known_dtype(std::string_view name);

/// Pickles `metadata` the way `dcp.save` does (`pickle.dump`, protocol 4), for
/// `FileSystemReader.read_metadata()` / `dcp.load` of PyTorch 2.15 to read. Byte-identical
/// to Python's output for a single-process dcp.save; otherwise only memo reuse of equal
/// strings can differ (see checkpoint_formats/dcp_common/metadata_encode.cpp). Throws MetadataError for what
/// Python could not have written: an unknown dtype or layout, a memory format out of range,
/// a string that is not UTF-8, or a key that appears twice in a map.
[[nodiscard]] std::string write_metadata(const Metadata& metadata);

/// Parses the bytes of a `.metadata` file (pickle protocols 2 to 5 as Python writes them).
/// Only the globals DCP metadata uses are accepted and nothing is ever called; any other
/// global (e.g. `os.system`) is refused by name. Malformed or truncated input throws
/// MetadataError naming `file_for_messages` and the byte offset, as does a file that shares
/// objects so much that decoding would exceed 64 times its size (DCP files need under 8).
/// Duplicate keys in a dict behave as in Python (first position, last value).
[[nodiscard]] Metadata read_metadata(std::string_view bytes, const std::string& file_for_messages);

}  // namespace shardkit::dcp
