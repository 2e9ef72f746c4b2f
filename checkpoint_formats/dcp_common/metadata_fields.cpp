// The field lists of DCP's dataclasses, which write_metadata and read_metadata run through the
// dataclass codec, and the codecs of the values that only DCP metadata has.
//
// Each list is in the order Python pickles the fields (__dict__ order: the order __init__
// sets them, or the order __getstate__ builds), which the bytes depend on. Str roles decide
// which equal strings are one Python object (see metadata_encode.cpp).
#include "metadata_fields.hpp"

#include <algorithm>
#include <utility>
#include <variant>

#include "field_codecs.hpp"

namespace shardkit::dcp::detail {
namespace {

// An fqn is one Python object wherever it appears: state_dict_metadata and planner_data keys,
// MetadataIndex.fqn.
constexpr std::string_view kFqn = "F";

// TensorProperties.__getstate__ returns a 6-tuple; files from before `strides` have 5.
const Dataclass<TensorProperties>& properties_class() {
  using P = TensorProperties;
  static const Dataclass<P> cls{
      kMetadataModule, "TensorProperties", GlobalKind::TensorProperties, StateForm::tuple,
      {field("dtype", &P::dtype, Dtype{}),
       field("layout", &P::layout, Layout{}),
       field("requires_grad", &P::requires_grad, Bool{}),
       field("memory_format", &P::memory_format, MemFormat{}),
       field("pin_memory", &P::pin_memory, Bool{}),
       field("strides", &P::strides, OrNone{IntTuple{}}, Presence::optional)}};
  return cls;
}

const Dataclass<ChunkStorageMetadata>& chunk_class() {
  using C = ChunkStorageMetadata;
  static const Dataclass<C> cls{
      kMetadataModule, "ChunkStorageMetadata", GlobalKind::ChunkStorageMetadata, StateForm::dict,
      {field("offsets", &C::offsets, TorchSize{}),  //
       field("sizes", &C::sizes, TorchSize{})}};
  return cls;
}

const Dataclass<TensorStorageMetadata>& tensor_class() {
  using T = TensorStorageMetadata;
  static const Dataclass<T> cls{
      kMetadataModule, "TensorStorageMetadata", GlobalKind::TensorStorageMetadata, StateForm::dict,
      {field("properties", &T::properties, Instance{&properties_class()}),
       field("size", &T::size, TorchSize{}),
       field("chunks", &T::chunks, ListOf{Instance{&chunk_class()}})}};
  return cls;
}

const Dataclass<BytesStorageMetadata>& bytes_class() {
  static const Dataclass<BytesStorageMetadata> cls{kMetadataModule, "BytesStorageMetadata",
                                                   GlobalKind::BytesStorageMetadata,
                                                   StateForm::dict, {}};
  return cls;
}

// A state_dict_metadata value: the class the object names picks which.
struct StorageEntry {
  using type = StorageMetadata;
  void save(Encoder& e, const StorageMetadata& entry) const {
    if (const auto* t = std::get_if<TensorStorageMetadata>(&entry)) {
      encode_dataclass(e, tensor_class(), *t);
    } else {
      encode_dataclass(e, bytes_class(), std::get<BytesStorageMetadata>(entry));
    }
  }
  StorageMetadata load(Decoder& d, const Value* v, const std::string& ctx) const {
    if (v->kind == Kind::Object && v->callable->global == GlobalKind::BytesStorageMetadata) {
      return decode_dataclass(d, bytes_class(), v, ctx);
    }
    TensorStorageMetadata t = decode_dataclass(d, tensor_class(), v, ctx);
    for (const auto& c : t.chunks) {
      if (c.offsets.size() != t.size.size() || c.sizes.size() != t.size.size()) {
        d.fail(v, ctx + ": a chunk's rank differs from the tensor's");
      }
    }
    return t;
  }
};

// A planner_data value: the path of an fqn in the nested state dict, a tuple of str (dict
// keys) and int (list indices).
struct PlannerPath {
  using type = std::vector<PathComponent>;
  void save(Encoder& e, const type& path) const {
    // A str component is the key of the dict its prefix leads to (the fqn itself for a
    // top-level leaf, as ".".join of one item returns that item).
    std::string prefix;
    e.pickle.save_tuple(path, [&](const PathComponent& c) {
      if (const auto* s = std::get_if<std::string>(&c)) {
        prefix += "s" + std::to_string(s->size()) + ":" + *s;
        const std::string id = path.size() == 1                  ? PickleWriter::identity(kFqn, *s)
                               : PickleWriter::python_shares(*s) ? "I:" + *s
                                                                 : "P:" + prefix;
        e.pickle.save_str(*s, id, "planner_data path component");
      } else {
        const std::int64_t i = std::get<std::int64_t>(c);
        prefix += "i:" + std::to_string(i) + ";";
        e.pickle.save_int(i);
      }
    });
  }
  type load(Decoder& d, const Value* v, const std::string& ctx) const {
    type path;
    for (const Value* c : d.sequence(v, ctx)) {
      if (c->kind == Kind::Str) {
        path.emplace_back(d.str(c, ctx));
      } else {
        path.emplace_back(d.integer(c, ctx + " item (str or int)"));
      }
    }
    return path;
  }
};

// MetadataIndex.__init__ sets fqn, index, then offset only when given.
const Dataclass<MetadataIndex>& index_class() {
  using I = MetadataIndex;
  static const Dataclass<I> cls{
      kMetadataModule, "MetadataIndex", GlobalKind::MetadataIndex, StateForm::dict,
      {field("fqn", &I::fqn, Str{kFqn, "MetadataIndex.fqn"}),
       field("index", &I::index, OrNone{Int{}}, Presence::optional),
       field("offset", &I::offset, OrNone{TorchSize{}}, Presence::when_set)}};
  return cls;
}

// _StorageInfo.__getstate__ is a new dict of the fields that are not None.
const Dataclass<StorageInfo>& storage_info_class() {
  using S = StorageInfo;
  static const Dataclass<S> cls{
      kFilesystemModule, "_StorageInfo", GlobalKind::StorageInfo, StateForm::dict,
      {field("relative_path", &S::relative_path, Str{"R", "_StorageInfo.relative_path"}),
       field("offset", &S::offset, Int{}),
       field("length", &S::length, Int{}),
       // Each descriptor is a fresh f-string in Python: never fetched from the memo.
       field("transform_descriptors", &S::transform_descriptors,
             OrNone{ListOf{Str{"", "transform descriptor"}}}, Presence::when_set)}};
  return cls;
}

// PosixPath(*args) joins its arguments as os.path.join does: an absolute one restarts.
std::string join_path(Decoder& d, const Value* v, const std::string& ctx) {
  const Value* args = d.object(v, GlobalKind::PosixPath, true, ctx);
  std::string out;
  for (const Value* part : args->items) {
    const std::string s = d.str(part, ctx + " part");
    if (!s.empty() && s[0] == '/') {
      out = s;
    } else if (out.empty() || out.back() == '/') {
      out += s;
    } else if (!s.empty()) {
      out += "/" + s;
    }
  }
  return out.empty() ? "." : out;
}

// StorageMeta.checkpoint_id: None, a str, or a pathlib.PosixPath (checkpoint_id_is_path).
struct CheckpointId {
  void save(Encoder& e, const StorageMeta& meta) const {
    PickleWriter& w = e.pickle;
    if (!meta.checkpoint_id) {
      w.save_none();
      return;
    }
    if (!meta.checkpoint_id_is_path) {
      w.save_str(*meta.checkpoint_id, PickleWriter::identity("C", *meta.checkpoint_id),
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
    w.boundary();
    w.save_global("pathlib", "PosixPath");
    // pathlib interns the parts, so they share memo entries with equal strings.
    w.save_tuple(parts, [&](const std::string& part) {
      w.save_str(part, "I:" + part, "StorageMeta.checkpoint_id");
    });
    w.emit(op::REDUCE);
    w.memoize();
  }
  void load(Decoder& d, const Value* v, StorageMeta& meta, const std::string& ctx) const {
    meta.checkpoint_id.reset();
    meta.checkpoint_id_is_path = true;  // also for None, matching a default StorageMeta
    if (v->kind == Kind::Object) {
      meta.checkpoint_id = join_path(d, v, ctx);
    } else if (v->kind != Kind::None) {
      meta.checkpoint_id = d.str(v, ctx + " (str or PosixPath)");
      meta.checkpoint_id_is_path = false;
    }
  }
};

const Dataclass<StorageMeta>& storage_meta_class() {
  using M = StorageMeta;
  static const Dataclass<M> cls{
      kMetadataModule, "StorageMeta", GlobalKind::StorageMeta, StateForm::dict,
      {object_field<M>("checkpoint_id", CheckpointId{}, Presence::optional),
       field("save_id", &M::save_id, OrNone{Str{"StorageMeta.save_id", "StorageMeta.save_id"}},
             Presence::optional),
       field("load_id", &M::load_id, OrNone{Str{"StorageMeta.load_id", "StorageMeta.load_id"}},
             Presence::optional),
       field("modules", &M::modules, ListOf{Str{"M", "StorageMeta.modules"}},
             Presence::optional)}};
  return cls;
}

}  // namespace

const Dataclass<Metadata>& metadata_class() {
  using M = Metadata;
  static const Dataclass<M> cls{
      kMetadataModule, "Metadata", GlobalKind::Metadata, StateForm::dict,
      {field("state_dict_metadata", &M::state_dict_metadata,
             DictOf{Str{kFqn, "state_dict_metadata key"}, StorageEntry{}}),
       field("planner_data", &M::planner_data,
             OrNone{DictOf{Str{kFqn, "planner_data key"}, PlannerPath{}}}, Presence::optional),
       field("storage_data", &M::storage_data,
             OrNone{DictOf{Instance{&index_class()}, Instance{&storage_info_class()}}},
             Presence::optional),
       field("storage_meta", &M::storage_meta, OrNone{Instance{&storage_meta_class()}},
             Presence::optional),
       field("version", &M::version, OrNone{Str{"Metadata.version", "Metadata.version"}},
             Presence::optional)}};
  return cls;
}

}  // namespace shardkit::dcp::detail
