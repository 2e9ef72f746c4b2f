// The field codecs of torch's own types (torch.Size, dtypes, layouts, the memory format enum)
// and the dict key identity of MetadataIndex.
#include "field_codecs.hpp"

namespace shardkit::dcp::detail {

void TorchSize::save(Encoder& e, const std::vector<std::int64_t>& dims) const {
  PickleWriter& w = e.pickle;
  w.boundary();
  w.save_global("torch", "Size", "Size");
  w.boundary();  // the args tuple
  w.save_int_tuple(dims);
  w.emit(op::TUPLE1);
  w.memoize();
  w.emit(op::REDUCE);
  w.memoize();
}

std::vector<std::int64_t> TorchSize::load(Decoder& d, const Value* v,
                                          const std::string& ctx) const {
  const Value* args = d.object(v, GlobalKind::TorchSize, true, ctx + " (torch.Size)");
  if (args->items.size() != 1) d.fail(v, ctx + ": torch.Size needs one argument");
  return d.ints(args->items[0], ctx);
}

void Dtype::save(Encoder& e, const std::string& dtype) const {
  if (!is_known_dtype(dtype)) {
    throw MetadataError("write_metadata: '" + std::string(e.entry) + "' has unknown torch dtype '" +
                        dtype + "' (use the canonical name, e.g. float32 rather than float)");
  }
  e.pickle.save_global("torch", dtype, "dtype");
}

std::string Dtype::load(Decoder& d, const Value* v, const std::string& ctx) const {
  if (v->kind != Kind::Global || v->global != GlobalKind::Dtype) {
    d.fail(v, ctx + ": not a torch dtype");
  }
  return v->name;
}

void Layout::save(Encoder& e, const std::string& layout) const {
  if (!is_known_layout(layout)) {
    throw MetadataError("write_metadata: unknown torch layout '" + layout + "'");
  }
  PickleWriter& w = e.pickle;
  w.boundary();
  const std::string memo_key = "L:" + layout;
  if (w.get_memoized(memo_key)) return;
  // copyreg reduces a layout to (torch.serialization._get_layout, (str(layout),)).
  w.save_global(kSerializationModule, "_get_layout");
  w.boundary();
  w.save_str("torch." + layout, {}, "layout");
  w.emit(op::TUPLE1);
  w.memoize();
  w.emit(op::REDUCE);
  w.remember(memo_key, w.memoize());
}

std::string Layout::load(Decoder& d, const Value* v, const std::string& ctx) const {
  if (v->kind == Kind::Global && v->global == GlobalKind::Layout) return v->name;
  const Value* args = d.object(v, GlobalKind::GetLayout, true, ctx);
  if (args->items.size() == 1 && args->items[0]->kind == Kind::Str) {
    const std::string& s = args->items[0]->text;
    if (s.rfind("torch.", 0) == 0 && is_known_layout(s.substr(6))) return s.substr(6);
  }
  d.fail(v, ctx + ": _get_layout argument is not a torch layout name");
}

void MemFormat::save(Encoder& e, MemoryFormat format) const {
  const auto value = static_cast<std::int64_t>(format);
  if (value < 0 || value > 2) {
    throw MetadataError("write_metadata: memory_format " + std::to_string(value) +
                        " is not 0, 1 or 2");
  }
  PickleWriter& w = e.pickle;
  w.boundary();
  const std::string memo_key = "E:" + std::to_string(value);
  if (w.get_memoized(memo_key)) return;
  w.save_global(kMetadataModule, "_MEM_FORMAT_ENCODING");  // an Enum member: (cls, (value,))
  w.boundary();
  w.save_int(value);
  w.emit(op::TUPLE1);
  w.memoize();
  w.emit(op::REDUCE);
  w.remember(memo_key, w.memoize());
}

MemoryFormat MemFormat::load(Decoder& d, const Value* v, const std::string& ctx) const {
  const Value* args = d.object(v, GlobalKind::MemFormatEncoding, true, ctx);
  if (args->items.size() != 1) d.fail(v, ctx + ": _MEM_FORMAT_ENCODING needs one argument");
  const std::int64_t value = d.integer(args->items[0], ctx);
  if (value < 0 || value > 2) {
    d.fail(v, ctx + ": _MEM_FORMAT_ENCODING value " + std::to_string(value));
  }
  return static_cast<MemoryFormat>(value);
}

std::string python_key(const MetadataIndex& key) {
  std::string id = key.fqn + '\0';
  if (key.offset) {
    for (std::int64_t d : *key.offset) id += std::to_string(d) + ",";
  } else {
    id += "None";
  }
  return id;
}

}  // namespace shardkit::dcp::detail
