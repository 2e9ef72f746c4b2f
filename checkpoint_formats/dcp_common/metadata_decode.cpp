// read_metadata: checks the unpickled Value tree against DCP's classes and builds a Metadata.
//
// The walk follows the shape of Metadata, never the shape of the input, so its depth is
// fixed and a hostile tree (shared or cyclic references) cannot make it recurse or loop.
// Each mismatch names the field path, e.g. "state_dict_metadata['w'].size".
#include <unordered_map>

#include "pickle_ops.hpp"
#include "pickle_value.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp {
namespace {

using detail::GlobalKind;
using detail::Kind;
using detail::Value;

class Decoder {
 public:
  // Decoding may copy a shared object once per reference (Python shares strings, layouts
  // and enum members that way); the budget keeps hostile sharing (one huge object referenced
  // from everywhere) from turning a small file into gigabytes: DCP's own files need a few
  // bytes of output per input byte.
  Decoder(const std::string& file, std::size_t input_size)
      : file_(file), budget_(64 * input_size + (std::size_t{1} << 20)) {}

  Metadata metadata(const Value* root) {
    Metadata md;
    bool have_entries = false;
    for_fields(root, GlobalKind::Metadata, "Metadata",
               [&](const std::string& field, const Value* v) {
                 if (field == "state_dict_metadata") {
                   md.state_dict_metadata = state_dict_metadata(v);
                   have_entries = true;
                 } else if (field == "planner_data") {
                   if (v->kind != Kind::None) md.planner_data = planner_data(v);
                 } else if (field == "storage_data") {
                   if (v->kind != Kind::None) md.storage_data = storage_data(v);
                 } else if (field == "storage_meta") {
                   if (v->kind != Kind::None) md.storage_meta = storage_meta(v);
                 } else if (field == "version") {
                   md.version = optional_str(v, "Metadata.version");
                 } else {
                   return false;
                 }
                 return true;
               });
    if (!have_entries) fail(root, "Metadata has no state_dict_metadata");
    return md;
  }

 private:
  const std::string& file_;
  mutable std::size_t budget_;

  void charge(std::size_t bytes, const Value* at) const {
    if (bytes > budget_) {
      fail(at,
           "decoded metadata would be over 64 times the file's size (the file shares objects "
           "far more than DCP does)");
    }
    budget_ -= bytes;
  }

  [[noreturn]] void fail(const Value* at, const std::string& what) const {
    throw MetadataError(file_ + ": " + what + " (object made at byte " +
                        std::to_string(at->offset) + ")");
  }
  void expect(const Value* v, Kind kind, const std::string& ctx) const {
    if (v->kind != kind) {
      fail(v,
           ctx + ": expected " + detail::kind_name(kind) + ", got " + detail::kind_name(v->kind));
    }
  }
  std::string str(const Value* v, const std::string& ctx) const {
    expect(v, Kind::Str, ctx);
    charge(v->text.size() + 16, v);
    return v->text;
  }
  std::int64_t integer(const Value* v, const std::string& ctx) const {
    expect(v, Kind::Int, ctx);
    charge(8, v);
    return v->integer;
  }
  bool boolean(const Value* v, const std::string& ctx) const {
    expect(v, Kind::Bool, ctx);
    charge(1, v);
    return v->boolean;
  }
  std::optional<std::string> optional_str(const Value* v, const std::string& ctx) const {
    if (v->kind == Kind::None) return std::nullopt;
    return str(v, ctx);
  }
  const std::vector<Value*>& sequence(const Value* v, const std::string& ctx) const {
    if (v->kind != Kind::Tuple && v->kind != Kind::List) {
      fail(v, ctx + ": expected a tuple or list, got " + detail::kind_name(v->kind));
    }
    charge(16, v);
    return v->items;
  }
  std::vector<std::int64_t> ints(const Value* v, const std::string& ctx) const {
    std::vector<std::int64_t> out;
    const std::string item_ctx = ctx + " item";
    for (const Value* item : sequence(v, ctx)) out.push_back(integer(item, item_ctx));
    return out;
  }
  std::vector<std::string> strs(const Value* v, const std::string& ctx) const {
    std::vector<std::string> out;
    const std::string item_ctx = ctx + " item";
    for (const Value* item : sequence(v, ctx)) out.push_back(str(item, item_ctx));
    return out;
  }

  // An object made by `maker` (a Global of that kind) with REDUCE (reduced = true) or NEWOBJ.
  const Value* object(const Value* v, GlobalKind maker, bool reduced,
                      const std::string& ctx) const {
    if (v->kind != Kind::Object) {
      fail(v, ctx + ": expected " + detail::global_kind_name(maker) + ", got " +
                  detail::kind_name(v->kind));
    }
    if (v->callable->global != maker || v->newobj == reduced) {
      fail(v, ctx + ": expected " + detail::global_kind_name(maker) +
                  (reduced ? " (REDUCE)" : " (NEWOBJ)") + ", got " + v->callable->text + "." +
                  v->callable->name + (v->newobj ? " (NEWOBJ)" : " (REDUCE)"));
    }
    charge(48, v);
    return v->args;
  }

  // A dataclass instance: cls.__new__(cls) via NEWOBJ, then BUILD with its __dict__. Calls
  // `field(name, value)` per entry; it returns false for a name the class does not have.
  template <class F>
  void for_fields(const Value* v, GlobalKind cls, const std::string& ctx, F field) const {
    if (!object(v, cls, false, ctx)->items.empty()) fail(v, ctx + ": NEWOBJ with arguments");
    if (v->state == nullptr) fail(v, ctx + ": object without state");
    expect(v->state, Kind::Dict, ctx + " state");
    for (const auto& [key, value] : v->state->entries) {
      const std::string name = str(key, ctx + " field name");
      if (!field(name, value)) fail(key, ctx + " has no field '" + detail::printable(name) + "'");
    }
  }

  std::vector<std::int64_t> size(const Value* v, const std::string& ctx) const {
    const Value* args = object(v, GlobalKind::TorchSize, true, ctx + " (torch.Size)");
    if (args->items.size() != 1) fail(v, ctx + ": torch.Size needs one argument");
    return ints(args->items[0], ctx);
  }

  std::string layout(const Value* v, const std::string& ctx) const {
    if (v->kind == Kind::Global && v->global == GlobalKind::Layout) return v->name;
    const Value* args = object(v, GlobalKind::GetLayout, true, ctx);
    if (args->items.size() == 1 && args->items[0]->kind == Kind::Str) {
      const std::string& s = args->items[0]->text;
      if (s.rfind("torch.", 0) == 0 && detail::is_known_layout(s.substr(6))) return s.substr(6);
    }
    fail(v, ctx + ": _get_layout argument is not a torch layout name");
  }

  MemoryFormat memory_format(const Value* v, const std::string& ctx) const {
    const Value* args = object(v, GlobalKind::MemFormatEncoding, true, ctx);
    if (args->items.size() != 1) fail(v, ctx + ": _MEM_FORMAT_ENCODING needs one argument");
    const std::int64_t value = integer(args->items[0], ctx);
    if (value < 0 || value > 2)
      fail(v, ctx + ": _MEM_FORMAT_ENCODING value " + std::to_string(value));
    return static_cast<MemoryFormat>(value);
  }

  TensorProperties properties(const Value* v, const std::string& ctx) const {
    if (!object(v, GlobalKind::TensorProperties, false, ctx)->items.empty())
      fail(v, ctx + ": NEWOBJ with arguments");
    // TensorProperties.__setstate__ takes the 6-tuple of __getstate__, or 5 (before strides).
    if (v->state == nullptr) fail(v, ctx + ": TensorProperties without state");
    expect(v->state, Kind::Tuple, ctx + " state");
    const auto& s = v->state->items;
    if (s.size() != 5 && s.size() != 6)
      fail(v, ctx + ": state tuple of " + std::to_string(s.size()) + " items");
    TensorProperties p;
    if (s[0]->kind != Kind::Global || s[0]->global != GlobalKind::Dtype)
      fail(s[0], ctx + ".dtype: not a torch dtype");
    p.dtype = s[0]->name;
    p.layout = layout(s[1], ctx + ".layout");
    p.requires_grad = boolean(s[2], ctx + ".requires_grad");
    p.memory_format = memory_format(s[3], ctx + ".memory_format");
    p.pin_memory = boolean(s[4], ctx + ".pin_memory");
    if (s.size() == 6 && s[5]->kind != Kind::None) p.strides = ints(s[5], ctx + ".strides");
    return p;
  }

  TensorStorageMetadata tensor(const Value* v, const std::string& ctx) const {
    TensorStorageMetadata t;
    bool have[3] = {false, false, false};
    for_fields(v, GlobalKind::TensorStorageMetadata, ctx,
               [&](const std::string& f, const Value* x) {
                 if (f == "properties") {
                   t.properties = properties(x, ctx + ".properties");
                   have[0] = true;
                 } else if (f == "size") {
                   t.size = size(x, ctx + ".size");
                   have[1] = true;
                 } else if (f == "chunks") {
                   t.chunks.clear();
                   for (const Value* c : sequence(x, ctx + ".chunks"))
                     t.chunks.push_back(chunk(c, ctx + ".chunks[]"));
                   have[2] = true;
                 } else {
                   return false;
                 }
                 return true;
               });
    if (!have[0] || !have[1] || !have[2])
      fail(v, ctx + ": TensorStorageMetadata lacks properties, size or chunks");
    for (const auto& c : t.chunks) {
      if (c.offsets.size() != t.size.size() || c.sizes.size() != t.size.size()) {
        fail(v, ctx + ": a chunk's rank differs from the tensor's");
      }
    }
    return t;
  }

  ChunkStorageMetadata chunk(const Value* v, const std::string& ctx) const {
    ChunkStorageMetadata c;
    bool have[2] = {false, false};
    for_fields(v, GlobalKind::ChunkStorageMetadata, ctx, [&](const std::string& f, const Value* x) {
      if (f == "offsets") {
        c.offsets = size(x, ctx + ".offsets");
        have[0] = true;
      } else if (f == "sizes") {
        c.sizes = size(x, ctx + ".sizes");
        have[1] = true;
      } else {
        return false;
      }
      return true;
    });
    if (!have[0] || !have[1]) fail(v, ctx + ": ChunkStorageMetadata lacks offsets or sizes");
    return c;
  }

  StorageMetadata storage_entry(const Value* v, const std::string& ctx) const {
    if (v->kind == Kind::Object && v->callable->global == GlobalKind::BytesStorageMetadata) {
      if (!object(v, GlobalKind::BytesStorageMetadata, false, ctx)->items.empty())
        fail(v, ctx + ": NEWOBJ with arguments");
      // No fields: no state at all (Python 3.11+), or an empty __dict__ from older Pythons.
      if (v->state != nullptr && !(v->state->kind == Kind::Dict && v->state->entries.empty()) &&
          v->state->kind != Kind::None) {
        fail(v, ctx + ": BytesStorageMetadata with state");
      }
      return BytesStorageMetadata{};
    }
    return tensor(v, ctx);
  }

  // Python dict semantics for repeated keys: the first position, the last value.
  template <class K, class V, class KeyOf>
  static void put(std::vector<std::pair<K, V>>& out,
                  std::unordered_map<std::string, std::size_t>& where, K key, V value,
                  KeyOf key_of) {
    auto [it, inserted] = where.emplace(key_of(key), out.size());
    if (inserted) {
      out.emplace_back(std::move(key), std::move(value));
    } else {
      out[it->second].second = std::move(value);
    }
  }
  static std::string same(const std::string& s) { return s; }

  // A key for messages, bounded so that building contexts stays linear in the input.
  static std::string shown(const std::string& key) { return detail::printable(key); }

  std::vector<std::pair<std::string, StorageMetadata>> state_dict_metadata(const Value* v) const {
    expect(v, Kind::Dict, "state_dict_metadata");
    std::vector<std::pair<std::string, StorageMetadata>> out;
    std::unordered_map<std::string, std::size_t> where;
    for (const auto& [k, x] : v->entries) {
      std::string fqn = str(k, "state_dict_metadata key");
      StorageMetadata entry = storage_entry(x, "state_dict_metadata['" + shown(fqn) + "']");
      put(out, where, std::move(fqn), std::move(entry), same);
    }
    return out;
  }

  std::vector<std::pair<std::string, std::vector<PathComponent>>> planner_data(
      const Value* v) const {
    expect(v, Kind::Dict, "planner_data (the default planner's fqn -> path mapping)");
    std::vector<std::pair<std::string, std::vector<PathComponent>>> out;
    std::unordered_map<std::string, std::size_t> where;
    for (const auto& [k, x] : v->entries) {
      std::string fqn = str(k, "planner_data key");
      const std::string ctx = "planner_data['" + shown(fqn) + "']";
      std::vector<PathComponent> path;
      for (const Value* c : sequence(x, ctx)) {
        if (c->kind == Kind::Str) {
          path.emplace_back(str(c, ctx));
        } else {
          path.emplace_back(integer(c, ctx + " item (str or int)"));
        }
      }
      put(out, where, std::move(fqn), std::move(path), same);
    }
    return out;
  }

  MetadataIndex index(const Value* v, const std::string& ctx) const {
    MetadataIndex m;
    bool have_fqn = false;
    for_fields(v, GlobalKind::MetadataIndex, ctx, [&](const std::string& f, const Value* x) {
      if (f == "fqn") {
        m.fqn = str(x, ctx + ".fqn");
        have_fqn = true;
      } else if (f == "offset") {
        m.offset.reset();
        if (x->kind != Kind::None) m.offset = size(x, ctx + ".offset");
      } else if (f == "index") {
        m.index.reset();
        if (x->kind != Kind::None) m.index = integer(x, ctx + ".index");
      } else {
        return false;
      }
      return true;
    });
    if (!have_fqn) fail(v, ctx + ": MetadataIndex without fqn");
    return m;
  }

  StorageInfo storage_info(const Value* v, const std::string& ctx) const {
    StorageInfo s;
    bool have[3] = {false, false, false};
    for_fields(v, GlobalKind::StorageInfo, ctx, [&](const std::string& f, const Value* x) {
      if (f == "relative_path") {
        s.relative_path = str(x, ctx + ".relative_path");
        have[0] = true;
      } else if (f == "offset") {
        s.offset = integer(x, ctx + ".offset");
        have[1] = true;
      } else if (f == "length") {
        s.length = integer(x, ctx + ".length");
        have[2] = true;
      } else if (f == "transform_descriptors") {
        s.transform_descriptors.reset();
        if (x->kind != Kind::None)
          s.transform_descriptors = strs(x, ctx + ".transform_descriptors");
      } else {
        return false;
      }
      return true;
    });
    if (!have[0] || !have[1] || !have[2])
      fail(v, ctx + ": _StorageInfo lacks relative_path, offset or length");
    return s;
  }

  std::vector<std::pair<MetadataIndex, StorageInfo>> storage_data(const Value* v) const {
    expect(v, Kind::Dict, "storage_data");
    std::vector<std::pair<MetadataIndex, StorageInfo>> out;
    std::unordered_map<std::string, std::size_t> where;
    for (const auto& [k, x] : v->entries) {
      MetadataIndex key = index(k, "storage_data key");
      StorageInfo info = storage_info(x, "storage_data['" + shown(key.fqn) + "']");
      // MetadataIndex hashes and compares (fqn, offset); `index` does not count.
      put(out, where, std::move(key), std::move(info), [](const MetadataIndex& m) {
        std::string id = m.fqn + '\0';
        if (m.offset) {
          for (std::int64_t d : *m.offset) id += std::to_string(d) + ",";
        } else {
          id += "None";
        }
        return id;
      });
    }
    return out;
  }

  // PosixPath(*args) joins its arguments as os.path.join does: an absolute one restarts.
  std::string path(const Value* v, const std::string& ctx) const {
    const Value* args = object(v, GlobalKind::PosixPath, true, ctx);
    std::string out;
    for (const Value* part : args->items) {
      const std::string s = str(part, ctx + " part");
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

  StorageMeta storage_meta(const Value* v) const {
    StorageMeta m;
    for_fields(v, GlobalKind::StorageMeta, "storage_meta",
               [&](const std::string& f, const Value* x) {
                 if (f == "checkpoint_id") {
                   m.checkpoint_id.reset();
                   m.checkpoint_id_is_path = true;  // also for None, matching a default StorageMeta
                   if (x->kind == Kind::Object) {
                     m.checkpoint_id = path(x, "storage_meta.checkpoint_id");
                   } else if (x->kind != Kind::None) {
                     m.checkpoint_id = str(x, "storage_meta.checkpoint_id (str or PosixPath)");
                     m.checkpoint_id_is_path = false;
                   }
                 } else if (f == "save_id") {
                   m.save_id = optional_str(x, "storage_meta.save_id");
                 } else if (f == "load_id") {
                   m.load_id = optional_str(x, "storage_meta.load_id");
                 } else if (f == "modules") {
                   m.modules = strs(x, "storage_meta.modules");
                 } else {
                   return false;
                 }
                 return true;
               });
    return m;
  }
};

}  // namespace

Metadata read_metadata(std::string_view bytes, const std::string& file_for_messages) {
  const detail::Unpickled tree = detail::unpickle(bytes, file_for_messages);
  return Decoder(file_for_messages, bytes.size()).metadata(tree.root);
}

}  // namespace shardkit::dcp
