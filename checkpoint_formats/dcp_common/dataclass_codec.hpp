// One pickle codec for every DCP dataclass, driven by the class's field list.
//
// A Dataclass<T> describes a Python dataclass: its global, how its state is pickled, and
// its fields in the order Python pickles them, each with the codec of its value (see
// field_codecs.hpp):
//
//   Dataclass<ChunkStorageMetadata>{
//       kMetadataModule, "ChunkStorageMetadata", GlobalKind::ChunkStorageMetadata,
//       StateForm::dict,
//       {field("offsets", &ChunkStorageMetadata::offsets, TorchSize{}),
//        field("sizes", &ChunkStorageMetadata::sizes, TorchSize{})}};
//
// encode_dataclass writes an instance as Python's copyreg.__newobj__ reduction does (the
// class, an empty argument tuple, NEWOBJ, then the state and BUILD); decode_dataclass reads
// one back, and its errors name the object's path, the class and the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pickle_ops.hpp"
#include "pickle_value.hpp"
#include "pickle_writer.hpp"
#include "value_decoder.hpp"

namespace shardkit::dcp::detail {

// What the codecs write into.
struct Encoder {
  PickleWriter pickle;
  std::string_view entry;  // the key of the dict entry being written, for messages
};

// How BUILD receives an instance's state.
enum class StateForm : std::uint8_t {
  dict,   // a dict of the attributes that are set (__dict__, or _StorageInfo.__getstate__)
  tuple,  // a tuple of every field in order (TensorProperties.__getstate__)
};

enum class Presence : std::uint8_t {
  required,  // always written; reading fails without it
  optional,  // always written; a file may lack it (older torch), which keeps the C++ default
  // Written only while the std::optional member holds a value: MetadataIndex leaves `offset`
  // unset for byte items, _StorageInfo.__getstate__ drops the fields that are None.
  when_set,
};

template <class T>
struct Field {
  std::string_view name;  // the Python attribute
  Presence presence;
  std::function<bool(const T&)> is_set;  // when_set fields only
  std::function<void(Encoder&, const T&)> save;
  std::function<void(Decoder&, const Value*, T&, const std::string& ctx)> load;
};

template <class T>
struct Dataclass {
  std::string_view module;
  std::string_view name;
  GlobalKind kind;  // what the unpickler resolves module.name to
  StateForm form;
  std::vector<Field<T>> fields;  // in the order Python pickles them: the bytes depend on it
};

// A field held in `member`, its value mapped by `codec` (a field_codecs.hpp codec).
template <class T, class M, class Codec>
Field<T> field(std::string_view name, M T::*member, Codec codec,
               Presence presence = Presence::required) {
  Field<T> f{name, presence, {}, {}, {}};
  if constexpr (requires(const M& m) { m.has_value(); }) {
    if (presence == Presence::when_set) {
      f.is_set = [member](const T& obj) { return (obj.*member).has_value(); };
    }
  }
  f.save = [member, codec](Encoder& e, const T& obj) { codec.save(e, obj.*member); };
  f.load = [member, codec](Decoder& d, const Value* v, T& obj, const std::string& ctx) {
    obj.*member = codec.load(d, v, ctx);
  };
  return f;
}

// A field whose value spans several members: `codec` saves from and loads into the whole
// object (`void save(Encoder&, const T&)`, `void load(Decoder&, const Value*, T&, ctx)`).
template <class T, class Codec>
Field<T> object_field(std::string_view name, Codec codec, Presence presence) {
  return {name, presence, {},
          [codec](Encoder& e, const T& obj) { codec.save(e, obj); },
          [codec](Decoder& d, const Value* v, T& obj, const std::string& ctx) {
            codec.load(d, v, obj, ctx);
          }};
}

// The non-template halves of the codec (dataclass_codec.cpp).
void begin_dataclass(Encoder& e, std::string_view module, std::string_view name);
void save_field_name(Encoder& e, std::string_view name);
const Value* dataclass_state(Decoder& d, const Value* v, GlobalKind kind, std::string_view name,
                             bool has_fields, const std::string& ctx);
std::string field_context(const std::string& ctx, std::string_view name);
std::string named(const std::string& ctx, std::string_view class_name);

template <class T>
void encode_dataclass(Encoder& e, const Dataclass<T>& cls, const T& obj) {
  begin_dataclass(e, cls.module, cls.name);
  if (cls.form == StateForm::tuple) {
    e.pickle.save_tuple(cls.fields, [&](const Field<T>& f) { f.save(e, obj); });
  } else {
    std::vector<const Field<T>*> set;
    for (const Field<T>& f : cls.fields) {
      if (!f.is_set || f.is_set(obj)) set.push_back(&f);
    }
    // An empty __dict__ pickles as no state at all (object.__getstate__ gives None): no BUILD.
    if (set.empty()) return;
    e.pickle.save_dict(set, [&](const Field<T>* f) {
      save_field_name(e, f->name);
      f->save(e, obj);
    });
  }
  e.pickle.emit(op::BUILD);
}

// `ctx` is the object's path in messages; empty for the root, which its class name stands for.
template <class T>
T decode_dataclass(Decoder& d, const Dataclass<T>& cls, const Value* v, const std::string& ctx) {
  const auto& fields = cls.fields;
  const Value* state = dataclass_state(d, v, cls.kind, cls.name, !fields.empty(), ctx);
  T obj{};
  if (state == nullptr) return obj;  // a class without fields, pickled without state
  const std::string self = ctx.empty() ? std::string(cls.name) : ctx;
  if (cls.form == StateForm::tuple) {
    d.expect(state, Kind::Tuple, self + " state");
    const auto& items = state->items;
    // Files from an older torch lack the trailing optional fields (TensorProperties.strides).
    std::size_t fewest = 0;
    while (fewest < fields.size() && fields[fewest].presence == Presence::required) ++fewest;
    if (items.size() < fewest || items.size() > fields.size()) {
      d.fail(v, self + ": state tuple of " + std::to_string(items.size()) + " items");
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      fields[i].load(d, items[i], obj, field_context(ctx, fields[i].name));
    }
    return obj;
  }
  d.expect(state, Kind::Dict, self + " state");
  // A repeated key acts as in Python: the last value wins.
  std::vector<bool> seen(fields.size(), false);
  for (const auto& [key, value] : state->entries) {
    const std::string name = d.str(key, self + " field name");
    std::size_t i = 0;
    while (i < fields.size() && fields[i].name != name) ++i;
    if (i == fields.size()) d.fail(key, self + " has no field '" + printable(name) + "'");
    fields[i].load(d, value, obj, field_context(ctx, name));
    seen[i] = true;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].presence == Presence::required && !seen[i]) {
      d.fail(v, named(ctx, cls.name) + " lacks field '" + std::string(fields[i].name) + "'");
    }
  }
  return obj;
}

}  // namespace shardkit::dcp::detail
