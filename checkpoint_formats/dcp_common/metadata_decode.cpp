// read_metadata: checks the unpickled Value tree against DCP's classes and builds a Metadata.
//
// The dataclass codec walks the field lists of metadata_fields.cpp, never the shape of the
// input, so its depth is fixed and a hostile tree (shared or cyclic references) cannot make
// it recurse or loop. Each mismatch names the field path, e.g. "state_dict_metadata['w'].size".
#include "dataclass_codec.hpp"
#include "metadata_fields.hpp"
#include "pickle_value.hpp"
#include "shardkit/dcp/metadata.hpp"
#include "value_decoder.hpp"

namespace shardkit::dcp {

Metadata read_metadata(std::string_view bytes, const std::string& file_for_messages) {
  const detail::Unpickled tree = detail::unpickle(bytes, file_for_messages);
  detail::Decoder decoder(file_for_messages, bytes.size());
  // The root has no path: its messages name the class ("Metadata has no field 'x'").
  return detail::decode_dataclass(decoder, detail::metadata_class(), tree.root, "");
}

}  // namespace shardkit::dcp
