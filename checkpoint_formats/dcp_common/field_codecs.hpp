// Field codecs: how one C++ value maps to a pickle value and back, for the dataclass codec.
//
// A codec is a small struct:
//   using type = ...;                                                 // the C++ value
//   void save(Encoder&, const type&) const;                           // what Python writes
//   type load(Decoder&, const Value*, const std::string& ctx) const;  // checked, as C++
// Each save is one save() call of Python's pickler (see pickle_writer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dataclass_codec.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp::detail {

struct Int {
  using type = std::int64_t;
  void save(Encoder& e, std::int64_t v) const { e.pickle.save_int(v); }
  std::int64_t load(Decoder& d, const Value* v, const std::string& ctx) const {
    return d.integer(v, ctx);
  }
};

struct Bool {
  using type = bool;
  void save(Encoder& e, bool v) const { e.pickle.save_bool(v); }
  bool load(Decoder& d, const Value* v, const std::string& ctx) const { return d.boolean(v, ctx); }
};

// A str. Equal strings of one `role` are one Python object, so the second is a memo fetch
// (see metadata_encode.cpp); an empty role makes a new object each time. `what` names the
// string in messages.
struct Str {
  std::string_view role;
  std::string_view what;
  using type = std::string;
  void save(Encoder& e, const std::string& s) const {
    e.pickle.save_str(s, role.empty() ? std::string() : PickleWriter::identity(role, s), what);
  }
  std::string load(Decoder& d, const Value* v, const std::string& ctx) const {
    return d.str(v, ctx);
  }
};

// A tuple of ints (TensorProperties.strides).
struct IntTuple {
  using type = std::vector<std::int64_t>;
  void save(Encoder& e, const type& v) const { e.pickle.save_int_tuple(v); }
  type load(Decoder& d, const Value* v, const std::string& ctx) const { return d.ints(v, ctx); }
};

// torch.Size, which reduces to (torch.Size, (tuple(self),)).
struct TorchSize {
  using type = std::vector<std::int64_t>;
  void save(Encoder& e, const type& dims) const;
  type load(Decoder& d, const Value* v, const std::string& ctx) const;
};

// A torch dtype: the global torch.<name>. Writing an unknown name throws, naming e.entry.
struct Dtype {
  using type = std::string;
  void save(Encoder& e, const std::string& dtype) const;
  std::string load(Decoder& d, const Value* v, const std::string& ctx) const;
};

// A torch layout: reduced by torch.serialization._get_layout (older torch: the global).
struct Layout {
  using type = std::string;
  void save(Encoder& e, const std::string& layout) const;
  std::string load(Decoder& d, const Value* v, const std::string& ctx) const;
};

// A member of the _MEM_FORMAT_ENCODING Enum.
struct MemFormat {
  using type = MemoryFormat;
  void save(Encoder& e, MemoryFormat format) const;
  MemoryFormat load(Decoder& d, const Value* v, const std::string& ctx) const;
};

// A value or None.
template <class C>
struct OrNone {
  C inner;
  using type = std::optional<typename C::type>;
  void save(Encoder& e, const type& v) const {
    if (v) {
      inner.save(e, *v);
    } else {
      e.pickle.save_none();
    }
  }
  type load(Decoder& d, const Value* v, const std::string& ctx) const {
    if (v->kind == Kind::None) return std::nullopt;
    return inner.load(d, v, ctx);
  }
};
template <class C>
OrNone(C) -> OrNone<C>;

// A list (a tuple is accepted too).
template <class C>
struct ListOf {
  C item;
  using type = std::vector<typename C::type>;
  void save(Encoder& e, const type& items) const {
    e.pickle.save_list(items, [&](const typename C::type& x) { item.save(e, x); });
  }
  type load(Decoder& d, const Value* v, const std::string& ctx) const {
    type out;
    const std::string item_ctx = ctx + "[]";
    for (const Value* x : d.sequence(v, ctx)) out.push_back(item.load(d, x, item_ctx));
    return out;
  }
};
template <class C>
ListOf(C) -> ListOf<C>;

// An instance of another dataclass.
template <class T>
struct Instance {
  const Dataclass<T>* cls;
  using type = T;
  void save(Encoder& e, const T& obj) const { encode_dataclass(e, *cls, obj); }
  T load(Decoder& d, const Value* v, const std::string& ctx) const {
    return decode_dataclass(d, *cls, v, ctx);
  }
};
template <class T>
Instance(const Dataclass<T>*) -> Instance<T>;

// How a dict key is named in messages (an fqn), and its identity as a Python dict key:
// MetadataIndex hashes and compares (fqn, offset); `index` does not count.
inline const std::string& entry_name(const std::string& key) { return key; }
inline const std::string& entry_name(const MetadataIndex& key) { return key.fqn; }
inline std::string python_key(const std::string& key) { return key; }
std::string python_key(const MetadataIndex& key);

// A dict, kept in the file's (insertion) order. A repeated key acts as in Python: the first
// position, the last value.
template <class K, class V>
struct DictOf {
  K key;
  V value;
  using type = std::vector<std::pair<typename K::type, typename V::type>>;
  void save(Encoder& e, const type& entries) const {
    e.pickle.save_dict(entries, [&](const auto& entry) {
      key.save(e, entry.first);
      const std::string_view outer = std::exchange(e.entry, entry_name(entry.first));
      value.save(e, entry.second);
      e.entry = outer;
    });
  }
  type load(Decoder& d, const Value* v, const std::string& ctx) const {
    d.expect(v, Kind::Dict, ctx);
    type out;
    std::unordered_map<std::string, std::size_t> where;
    const std::string key_ctx = ctx + " key";
    for (const auto& [k, x] : v->entries) {
      typename K::type name = key.load(d, k, key_ctx);
      typename V::type val = value.load(d, x, ctx + "['" + printable(entry_name(name)) + "']");
      const auto [it, inserted] = where.emplace(python_key(name), out.size());
      if (inserted) {
        out.emplace_back(std::move(name), std::move(val));
      } else {
        out[it->second].second = std::move(val);
      }
    }
    return out;
  }
};
template <class K, class V>
DictOf(K, V) -> DictOf<K, V>;

}  // namespace shardkit::dcp::detail
