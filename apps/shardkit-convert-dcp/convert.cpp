// convert_folder: DCP entries in file order, each assembled from its chunks and streamed out.
#include "convert.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "shardkit/dcp/folder.hpp"
#include "shardkit/error.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit::convert {
namespace st = shardkit::safetensors;

Converted convert_folder(const std::string& dcp_dir, const std::string& output, const Progress& progress,
                         const std::string& name_prefix, const std::string& strip_prefix) {
  dcp::FolderReader reader(dcp_dir);
  const auto& entries = reader.metadata().state_dict_metadata;
  Converted done;
  std::vector<std::pair<std::string, const dcp::TensorStorageMetadata*>> tensors;
  for (const auto& [key, entry] : entries) {
    if (const auto* tensor = std::get_if<dcp::TensorStorageMetadata>(&entry)) tensors.emplace_back(key, tensor);
    else ++done.byte_items;
  }
  if (tensors.empty()) throw FormatError(dcp_dir + " holds no tensors to convert");
  const bool strip = std::all_of(tensors.begin(), tensors.end(),
                                 [&](const auto& t) { return t.first.rfind(strip_prefix, 0) == 0; });

  std::vector<st::TensorRef> refs;
  std::map<std::string, std::string> key_of;  // safetensors name -> DCP key
  for (const auto& [key, meta] : tensors) {
    const auto name = name_prefix + (strip ? key.substr(strip_prefix.size()) : key);
    const auto dtype = st::dtype_of(dcp::scalar_type_of(meta->properties.dtype));
    std::uint64_t nbytes = st::dtype_size(dtype);
    for (const auto d : meta->size) nbytes *= static_cast<std::uint64_t>(d);
    refs.push_back({name, dtype, meta->size, nullptr, static_cast<std::size_t>(nbytes)});
    key_of[name] = key;
  }

  at::Tensor current;  // the one tensor held at a time
  st::write_file_streaming(output, refs, [&](const st::TensorRef& ref) -> const void* {
    const auto& key = key_of.at(ref.name);
    ShardedState one;
    current = at::empty(ref.shape, at::TensorOptions().dtype(st::scalar_type_of(ref.dtype)));
    one.add(key, current, ShardLayout::whole(ref.shape), Replicas::none());
    reader.load(one, key);
    ++done.tensors;
    done.bytes += ref.nbytes;
    if (progress) progress(done.tensors, refs.size());
    return current.data_ptr();
  }, {{"format", "pt"}});

  // Verified before anyone deletes the source: every tensor there, with its shape.
  const auto written = st::File::open(output);
  for (const auto& ref : refs)
    if (!written.contains(ref.name) || written.get(ref.name).shape != ref.shape)
      throw FormatError(output + ": tensor '" + ref.name + "' did not come out as written");
  done.tensors = refs.size();
  return done;
}

std::string summary(const std::string& output, const Converted& done) {
  return "wrote " + output + ": " + std::to_string(done.tensors) + " tensors, " + std::to_string(done.bytes) +
         " bytes" +
         (done.byte_items ? " (" + std::to_string(done.byte_items) + " non-tensor entries left out)" : std::string());
}

}  // namespace shardkit::convert
