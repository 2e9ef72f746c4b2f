// Reading and writing the safetensors file format (Hugging Face), without LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardkit::safetensors {

/// Element type of a tensor, spelled as in the safetensors header ("F32", "BF16", ...).
enum class DType {
  BOOL,
  U8,
  I8,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
  F8_E5M2,
  F8_E4M3,
};

/// Every DType, in declaration order (handy for tests and tables).
extern const DType kAllDTypes[15];

/// The header spelling of a dtype, e.g. "BF16".
const char* dtype_name(DType dtype);

/// Bytes per element of a dtype (1, 2, 4 or 8).
std::size_t dtype_size(DType dtype);

/// The dtype whose header spelling is `name`, or nullopt when shardkit does not know it.
std::optional<DType> parse_dtype(const std::string& name);

/// The largest header (the JSON after the 8-byte length) a file may have, as in the
/// reference implementation: larger headers are refused before anything is allocated.
inline constexpr std::uint64_t kMaxHeaderSize = 100'000'000;

/// A tensor inside an open File: points into the file's bytes, valid while the File lives.
struct TensorView {
  DType dtype;                 ///< element type
  std::vector<int64_t> shape;  ///< dimensions; empty for a scalar
  const std::uint8_t* data;    ///< first byte (little-endian, C order); may be null if nbytes == 0
  std::size_t nbytes;          ///< product(shape) * dtype_size(dtype)
};

/// A validated safetensors file, memory-mapped (or held in memory for from_bytes).
///
/// Every rule of the format is checked when the file is opened, as the reference
/// implementation checks it; a violation is a shardkit::FormatError naming the file and
/// the rule. Example:
/// \code
///   auto file = shardkit::safetensors::File::open("model.safetensors");
///   for (const auto& name : file.names()) use(name, file.get(name));
/// \endcode
class File {
 public:
  /// Maps the file at `path` read-only and validates it. Throws FormatError if it cannot
  /// be opened or is malformed.
  static File open(const std::string& path);

  /// Validates an in-memory file image; `name` is used in error messages.
  static File from_bytes(std::vector<std::uint8_t> bytes, std::string name);

  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  /// Unmaps the file; views obtained from get() become invalid.
  ~File();

  /// The path (or the name given to from_bytes), as used in error messages.
  const std::string& path() const { return path_; }

  /// Tensor names in file order (increasing data offsets).
  const std::vector<std::string>& names() const { return names_; }

  /// Whether a tensor called `name` is in the file.
  bool contains(const std::string& name) const;

  /// The tensor called `name`. Throws FormatError naming the file and the tensor if absent.
  const TensorView& get(const std::string& name) const;

  /// The `__metadata__` string map of the header (empty when the file has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  File() = default;
  void release() noexcept;
  void load(const std::uint8_t* bytes, std::size_t size);

  std::string path_;
  std::vector<std::uint8_t> owned_;  // from_bytes storage; its buffer never moves
  void* map_ = nullptr;              // mmap'ed region for open(), or null
  std::size_t map_size_ = 0;
  std::vector<std::string> names_;
  std::unordered_map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// A tensor to write: borrowed bytes that must stay alive during write_file/serialize.
struct TensorRef {
  std::string name;            ///< unique, valid UTF-8, not "__metadata__"
  DType dtype;                 ///< element type
  std::vector<int64_t> shape;  ///< non-negative dimensions; empty for a scalar
  const void* data;            ///< nbytes bytes, little-endian, C order (null allowed if 0)
  std::size_t nbytes;          ///< must equal product(shape) * dtype_size(dtype)
};

/// Writes `tensors` (and `metadata` as `__metadata__` when non-empty) to `path` in the
/// layout the reference implementation produces, byte for byte (metadata keys are written
/// sorted; the reference writes them in hash order, so with several keys only the order of
/// the metadata entries may differ). The bytes go to a
/// temporary file next to `path` with large write calls, are fsync'ed, and the file is
/// then renamed over `path`, so a File still mapping the old `path` stays valid.
/// Throws FormatError for invalid input and RuntimeError for I/O failures.
void write_file(const std::string& path, const std::vector<TensorRef>& tensors,
                const std::map<std::string, std::string>& metadata = {});

/// write_file for more data than fits in memory at once: `tensors` give names, dtypes and
/// shapes (their `data` is ignored); `fill(t)` is called once per non-empty tensor, in file
/// order, and returns t.nbytes bytes that stay valid until the next call. The file is
/// byte-identical to what write_file writes for the same tensors.
void write_file_streaming(const std::string& path, const std::vector<TensorRef>& tensors,
                          const std::function<const void*(const TensorRef&)>& fill,
                          const std::map<std::string, std::string>& metadata = {});

/// The same bytes write_file would write, in memory.
std::vector<std::uint8_t> serialize(const std::vector<TensorRef>& tensors,
                                    const std::map<std::string, std::string>& metadata = {});

}  // namespace shardkit::safetensors
