// The conversion itself: a DCP folder's tensors streamed into one safetensors file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace shardkit::convert {

/// What convert_folder did.
struct Converted {
  std::size_t tensors = 0;        ///< tensors written
  std::size_t byte_items = 0;     ///< non-tensor entries left out (safetensors holds tensors only)
  std::uint64_t bytes = 0;        ///< tensor bytes written
};

/// Called after each tensor with (tensors done, tensors in all).
using Progress = std::function<void(std::size_t, std::size_t)>;

/// Writes every tensor entry of the DCP folder `dcp_dir` into the safetensors file `output`
/// (metadata {"format": "pt"}, as shardkit and `save_file` write it), one tensor in memory
/// at a time. Names lose `strip_prefix` when every name has it ("model." for a model folder,
/// "optimizer." for an optimizer folder, which gives the names of the `safetensors` format's
/// optimizer_state.safetensors) and gain `name_prefix` (a PEFT adapter's
/// "base_model.model."). `progress(done, total)` is called after
/// each tensor. Reads the written file back and checks every name and shape before
/// returning. Throws FormatError naming the file and entry on any problem.
Converted convert_folder(const std::string& dcp_dir, const std::string& output,
                         const Progress& progress, const std::string& name_prefix = "",
                         const std::string& strip_prefix = "model.");

/// "wrote <output>: 3 tensors, 1024 bytes (13 non-tensor entries left out)", for the user.
std::string summary(const std::string& output, const Converted& done);

}  // namespace shardkit::convert
