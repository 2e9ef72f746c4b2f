// write_metadata: a DCP Metadata as the pickle Python's pickle.dump (protocol 4) writes for it.
//
// Each object is reduced as its __reduce_ex__ makes Python write it: dataclasses as
// copyreg.__newobj__ (cls, (), NEWOBJ) plus BUILD with their __dict__ (TensorProperties
// and _StorageInfo with their __getstate__), written by the dataclass codec from the field
// lists in metadata_fields.cpp; torch.Size / the layout / the enum / PosixPath as a callable
// and its args (REDUCE), written by their field codecs. Every boundary() and every
// PickleWriter save stands for one save() call of CPython's pickler (see pickle_writer.hpp).
//
// What can differ from Python: memo reuse of equal strings. Python memoizes by object
// identity: a string seen before is fetched (BINGET) only if it is the same object, and a
// C++ struct has no identities. So each string gets the identity it has in a single-process
// dcp.save (checked byte for byte against Python's files in tests/unit/dcp), which the Str
// field codecs carry as their roles:
// - strings CPython interns (attribute names, pathlib parts, literals made of [A-Za-z0-9_]
//   such as "exp_avg") or caches (one character, "") are one object per value;
// - an fqn is one object wherever it appears (state_dict_metadata and planner_data keys,
//   MetadataIndex.fqn); so is a planner_data path component per path prefix (the key of
//   one nested dict); a relative_path per value; transform descriptors are always new;
// - global names are kept apart as Python keeps them: the "torch" module string of dtypes
//   is one object, that of torch.Size another.
// Where the real objects were related otherwise (a multi-rank save, whose plans were
// unpickled per rank; a non-literal key made of [A-Za-z0-9_] in two dicts), only BINGET vs
// string opcodes and memo numbers differ; Python reads both as the same Metadata.
#include <string>
#include <unordered_set>

#include "dataclass_codec.hpp"
#include "field_codecs.hpp"
#include "metadata_fields.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp {
namespace {

// Python dict keys are unique: a repeated key could not have come from Python, and
// Python would silently keep only the last value.
void check_unique_keys(const Metadata& md) {
  std::unordered_set<std::string_view> seen;
  for (const auto& [fqn, entry] : md.state_dict_metadata) {
    if (!seen.insert(fqn).second) {
      throw MetadataError("write_metadata: state_dict_metadata has '" + fqn + "' twice");
    }
  }
  if (md.planner_data) {
    seen.clear();
    for (const auto& [fqn, path] : *md.planner_data) {
      if (!seen.insert(fqn).second) {
        throw MetadataError("write_metadata: planner_data has '" + fqn + "' twice");
      }
    }
  }
  if (md.storage_data) {
    std::unordered_set<std::string> keys;
    for (const auto& [index, info] : *md.storage_data) {
      if (!keys.insert(detail::python_key(index)).second) {
        throw MetadataError("write_metadata: storage_data has the key of '" + index.fqn +
                            "' twice");
      }
    }
  }
}

}  // namespace

std::string write_metadata(const Metadata& metadata) {
  check_unique_keys(metadata);
  detail::Encoder e;
  detail::encode_dataclass(e, detail::metadata_class(), metadata);
  return e.pickle.finish();
}

}  // namespace shardkit::dcp
