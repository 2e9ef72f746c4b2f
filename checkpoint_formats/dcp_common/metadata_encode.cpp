// write_metadata: a DCP Metadata as the pickle Python's pickle.dump (protocol 4) writes for it.
//
// Each object is reduced as its __reduce_ex__ makes Python write it: dataclasses as
// copyreg.__newobj__ (cls, (), NEWOBJ) plus BUILD with their __dict__ (TensorProperties
// and _StorageInfo with their __getstate__), torch.Size / the layout / the enum /
// PosixPath as a callable and its args (REDUCE). Every boundary() here and every
// PickleWriter save stands for one save() call of CPython's pickler (see pickle_writer.hpp).
//
// What can differ from Python: memo reuse of equal strings. Python memoizes by object
// identity: a string seen before is fetched (BINGET) only if it is the same object, and a
// C++ struct has no identities. So each string gets the identity it has in a single-process
// dcp.save (checked byte for byte against Python's files in tests/unit/dcp):
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

#include "pickle_ops.hpp"
#include "pickle_writer.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp {
namespace {

using detail::PickleWriter;
namespace op = detail::op;

class Encoder {
 public:
  std::string encode(const Metadata& md) {
    save_metadata(md);
    return w_.finish();
  }

 private:
  PickleWriter w_;

  // torch.Size.__reduce__ is (torch.Size, (tuple(self),)).
  void save_size(const std::vector<std::int64_t>& dims) {
    w_.boundary();
    w_.save_global("torch", "Size", "Size");
    w_.boundary();  // the args tuple
    w_.save_int_tuple(dims);
    w_.emit(op::TUPLE1);
    w_.memoize();
    w_.emit(op::REDUCE);
    w_.memoize();
  }

  // copyreg.__newobj__(cls): cls, (), NEWOBJ; the state (if any) follows with BUILD.
  void begin_dataclass(std::string_view module, std::string_view name) {
    w_.boundary();
    w_.save_global(module, name);
    w_.boundary();
    w_.emit(op::EMPTY_TUPLE);
    w_.emit(op::NEWOBJ);
    w_.memoize();
  }

  // Dataclass state dicts: keys are the interned attribute names.
  void key(const char* name) { w_.save_str(name, PickleWriter::identity("I", name), "field name"); }

  void save_layout(const std::string& layout) {
    if (!detail::is_known_layout(layout)) {
      throw MetadataError("write_metadata: unknown torch layout '" + layout + "'");
    }
    w_.boundary();
    const std::string memo_key = "L:" + layout;
    if (w_.get_memoized(memo_key)) return;
    // copyreg reduces a layout to (torch.serialization._get_layout, (str(layout),)).
    w_.save_global(detail::kSerializationModule, "_get_layout");
    w_.boundary();
    w_.save_str("torch." + layout, {}, "layout");
    w_.emit(op::TUPLE1);
    w_.memoize();
    w_.emit(op::REDUCE);
    w_.remember(memo_key, w_.memoize());
  }

  void save_memory_format(MemoryFormat format) {
    const auto value = static_cast<std::int64_t>(format);
    if (value < 0 || value > 2) {
      throw MetadataError("write_metadata: memory_format " + std::to_string(value) +
                          " is not 0, 1 or 2");
    }
    w_.boundary();
    const std::string memo_key = "E:" + std::to_string(value);
    if (w_.get_memoized(memo_key)) return;
    w_.save_global(detail::kMetadataModule, "_MEM_FORMAT_ENCODING");  // Enum: (cls, (value,))
    w_.boundary();
    w_.save_int(value);
    w_.emit(op::TUPLE1);
    w_.memoize();
    w_.emit(op::REDUCE);
    w_.remember(memo_key, w_.memoize());
  }

  void save_properties(const TensorProperties& p, const std::string& fqn) {
    if (!is_known_dtype(p.dtype)) {
      throw MetadataError("write_metadata: '" + fqn + "' has unknown torch dtype '" + p.dtype +
                          "' (use the canonical name, e.g. float32 rather than float)");
    }
    begin_dataclass(detail::kMetadataModule, "TensorProperties");
    // TensorProperties.__getstate__ returns a 6-tuple.
    w_.boundary();
    w_.emit(op::MARK);
    w_.save_global("torch", p.dtype, "dtype");
    save_layout(p.layout);
    w_.save_bool(p.requires_grad);
    save_memory_format(p.memory_format);
    w_.save_bool(p.pin_memory);
    if (p.strides) {
      w_.save_int_tuple(*p.strides);
    } else {
      w_.save_none();
    }
    w_.emit(op::TUPLE);
    w_.memoize();
    w_.emit(op::BUILD);
  }

  void save_tensor(const std::string& fqn, const TensorStorageMetadata& t) {
    begin_dataclass(detail::kMetadataModule, "TensorStorageMetadata");
    w_.boundary();
    w_.emit(op::EMPTY_DICT);
    w_.memoize();
    w_.emit(op::MARK);
    key("properties");
    save_properties(t.properties, fqn);
    key("size");
    save_size(t.size);
    key("chunks");
    w_.save_list(t.chunks, [&](const ChunkStorageMetadata& c) {
      begin_dataclass(detail::kMetadataModule, "ChunkStorageMetadata");
      w_.boundary();
      w_.emit(op::EMPTY_DICT);
      w_.memoize();
      w_.emit(op::MARK);
      key("offsets");
      save_size(c.offsets);
      key("sizes");
      save_size(c.sizes);
      w_.emit(op::SETITEMS);
      w_.emit(op::BUILD);
    });
    w_.emit(op::SETITEMS);
    w_.emit(op::BUILD);
  }

  void save_storage_entry(const std::pair<std::string, StorageMetadata>& entry) {
    w_.save_str(entry.first, PickleWriter::identity("F", entry.first), "state_dict_metadata key");
    if (const auto* t = std::get_if<TensorStorageMetadata>(&entry.second)) {
      save_tensor(entry.first, *t);
    } else {
      // No fields: object.__getstate__ returns None, so there is no BUILD.
      begin_dataclass(detail::kMetadataModule, "BytesStorageMetadata");
    }
  }

  void save_planner_entry(const std::pair<std::string, std::vector<PathComponent>>& entry) {
    w_.save_str(entry.first, PickleWriter::identity("F", entry.first), "planner_data key");
    const auto& path = entry.second;
    w_.boundary();
    if (path.empty()) {
      w_.emit(op::EMPTY_TUPLE);
      return;
    }
    if (path.size() > 3) w_.emit(op::MARK);
    // A str component is the key of the dict its prefix leads to (the fqn itself for a
    // top-level leaf, as ".".join of one item returns that item).
    std::string prefix;
    for (const auto& c : path) {
      if (const auto* s = std::get_if<std::string>(&c)) {
        prefix += "s" + std::to_string(s->size()) + ":" + *s;
        const std::string id = path.size() == 1                  ? PickleWriter::identity("F", *s)
                               : PickleWriter::python_shares(*s) ? "I:" + *s
                                                                 : "P:" + prefix;
        w_.save_str(*s, id, "planner_data path component");
      } else {
        const std::int64_t i = std::get<std::int64_t>(c);
        prefix += "i:" + std::to_string(i) + ";";
        w_.save_int(i);
      }
    }
    w_.emit(path.size() == 1   ? op::TUPLE1
            : path.size() == 2 ? op::TUPLE2
            : path.size() == 3 ? op::TUPLE3
                               : op::TUPLE);
    w_.memoize();
  }

  void save_index(const MetadataIndex& index) {
    // MetadataIndex.__init__ sets fqn, index, then offset only when given: __dict__ order.
    begin_dataclass(detail::kMetadataModule, "MetadataIndex");
    w_.boundary();
    w_.emit(op::EMPTY_DICT);
    w_.memoize();
    w_.emit(op::MARK);
    key("fqn");
    w_.save_str(index.fqn, PickleWriter::identity("F", index.fqn), "MetadataIndex.fqn");
    key("index");
    if (index.index) {
      w_.save_int(*index.index);
    } else {
      w_.save_none();
    }
    if (index.offset) {
      key("offset");
      save_size(*index.offset);
    }
    w_.emit(op::SETITEMS);
    w_.emit(op::BUILD);
  }

  void save_storage_info(const StorageInfo& info) {
    // _StorageInfo.__getstate__ is a new dict of the fields that are not None.
    begin_dataclass(detail::kFilesystemModule, "_StorageInfo");
    w_.boundary();
    w_.emit(op::EMPTY_DICT);
    w_.memoize();
    w_.emit(op::MARK);
    key("relative_path");
    w_.save_str(info.relative_path, PickleWriter::identity("R", info.relative_path),
                "_StorageInfo.relative_path");
    key("offset");
    w_.save_int(info.offset);
    key("length");
    w_.save_int(info.length);
    if (info.transform_descriptors) {
      key("transform_descriptors");
      // Each descriptor is a fresh f-string in Python: never fetched from the memo.
      w_.save_list(*info.transform_descriptors,
                   [&](const std::string& d) { w_.save_str(d, {}, "transform descriptor"); });
    }
    w_.emit(op::SETITEMS);
    w_.emit(op::BUILD);
  }

  void save_checkpoint_id(const StorageMeta& meta) {
    if (!meta.checkpoint_id) {
      w_.save_none();
      return;
    }
    if (!meta.checkpoint_id_is_path) {
      w_.save_str(*meta.checkpoint_id, PickleWriter::identity("C", *meta.checkpoint_id),
                  "StorageMeta.checkpoint_id");
      return;
    }
    // PurePath.__reduce__ (Python 3.11) is (cls, self.parts): the root ("/" or "//"), then
    // the non-empty components other than ".".
    const std::string& path = *meta.checkpoint_id;
    std::vector<std::string> parts;
    std::size_t pos = 0;
    if (path.rfind("//", 0) == 0 && path.rfind("///", 0) != 0) {
      parts.emplace_back("//");
    } else if (!path.empty() && path[0] == '/') {
      parts.emplace_back("/");
    }
    while (pos <= path.size()) {
      const std::size_t slash = std::min(path.find('/', pos), path.size());
      std::string part = path.substr(pos, slash - pos);
      if (!part.empty() && part != ".") parts.push_back(std::move(part));
      pos = slash + 1;
    }
    w_.boundary();
    w_.save_global("pathlib", "PosixPath");
    w_.boundary();
    if (parts.empty()) {
      w_.emit(op::EMPTY_TUPLE);
    } else {
      if (parts.size() > 3) w_.emit(op::MARK);
      // pathlib interns the parts, so they share memo entries with equal strings.
      for (const auto& part : parts) w_.save_str(part, "I:" + part, "StorageMeta.checkpoint_id");
      w_.emit(parts.size() == 1   ? op::TUPLE1
              : parts.size() == 2 ? op::TUPLE2
              : parts.size() == 3 ? op::TUPLE3
                                  : op::TUPLE);
      w_.memoize();
    }
    w_.emit(op::REDUCE);
    w_.memoize();
  }

  void save_optional_str(const std::optional<std::string>& s, std::string_view what) {
    if (s) {
      w_.save_str(*s, PickleWriter::identity(what, *s), what);
    } else {
      w_.save_none();
    }
  }

  void save_storage_meta(const StorageMeta& meta) {
    begin_dataclass(detail::kMetadataModule, "StorageMeta");
    w_.boundary();
    w_.emit(op::EMPTY_DICT);
    w_.memoize();
    w_.emit(op::MARK);
    key("checkpoint_id");
    save_checkpoint_id(meta);
    key("save_id");
    save_optional_str(meta.save_id, "StorageMeta.save_id");
    key("load_id");
    save_optional_str(meta.load_id, "StorageMeta.load_id");
    key("modules");
    w_.save_list(meta.modules, [&](const std::string& m) {
      w_.save_str(m, PickleWriter::identity("M", m), "StorageMeta.modules");
    });
    w_.emit(op::SETITEMS);
    w_.emit(op::BUILD);
  }

  void save_metadata(const Metadata& md) {
    begin_dataclass(detail::kMetadataModule, "Metadata");
    w_.boundary();
    w_.emit(op::EMPTY_DICT);
    w_.memoize();
    w_.emit(op::MARK);
    key("state_dict_metadata");
    w_.save_dict(md.state_dict_metadata, [&](const auto& e) { save_storage_entry(e); });
    key("planner_data");
    if (md.planner_data) {
      w_.save_dict(*md.planner_data, [&](const auto& e) { save_planner_entry(e); });
    } else {
      w_.save_none();
    }
    key("storage_data");
    if (md.storage_data) {
      w_.save_dict(*md.storage_data, [&](const auto& e) {
        save_index(e.first);
        save_storage_info(e.second);
      });
    } else {
      w_.save_none();
    }
    key("storage_meta");
    if (md.storage_meta) {
      save_storage_meta(*md.storage_meta);
    } else {
      w_.save_none();
    }
    key("version");
    save_optional_str(md.version, "Metadata.version");
    w_.emit(op::SETITEMS);
    w_.emit(op::BUILD);
  }
};

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
    // Python's MetadataIndex equality is (fqn, offset); index does not count.
    std::unordered_set<std::string> keys;
    for (const auto& [index, info] : *md.storage_data) {
      std::string k = index.fqn;
      k.push_back('\0');
      if (index.offset) {
        for (std::int64_t d : *index.offset) k += std::to_string(d) + ",";
      } else {
        k += "None";
      }
      if (!keys.insert(std::move(k)).second) {
        throw MetadataError("write_metadata: storage_data has the key of '" + index.fqn +
                            "' twice");
      }
    }
  }
}

}  // namespace

std::string write_metadata(const Metadata& metadata) {
  check_unique_keys(metadata);
  return Encoder().encode(metadata);
}

}  // namespace shardkit::dcp
