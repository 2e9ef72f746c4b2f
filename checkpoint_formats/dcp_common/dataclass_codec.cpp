// The parts of the dataclass codec that do not depend on the class: the NEWOBJ header, field
// names, the checks on an instance before its state is read, and the paths in messages.
#include "dataclass_codec.hpp"

namespace shardkit::dcp::detail {

// copyreg.__newobj__(cls): cls, (), NEWOBJ. Each boundary() is one save() call of Python's
// pickler (see pickle_writer.hpp): the class, then the argument tuple.
void begin_dataclass(Encoder& e, std::string_view module, std::string_view name) {
  e.pickle.boundary();
  e.pickle.save_global(module, name);
  e.pickle.boundary();
  e.pickle.emit(op::EMPTY_TUPLE);
  e.pickle.emit(op::NEWOBJ);
  e.pickle.memoize();
}

// State dict keys are attribute names, which Python interns: one object per name.
void save_field_name(Encoder& e, std::string_view name) {
  const std::string s(name);
  e.pickle.save_str(s, PickleWriter::identity("I", s), "field name");
}

// `v` must be an instance of `kind` made by NEWOBJ without arguments. Its state, or nullptr
// for a class without fields that has none: Python 3.11+ pickles no state for an empty
// __dict__, and older versions an empty dict (returned, it has no field to fail on). A class
// with fields must have a state.
const Value* dataclass_state(Decoder& d, const Value* v, GlobalKind kind, std::string_view name,
                             bool has_fields, const std::string& ctx) {
  const std::string self = ctx.empty() ? std::string(name) : ctx;
  if (!d.object(v, kind, false, self)->items.empty()) d.fail(v, self + ": NEWOBJ with arguments");
  if (!has_fields && (v->state == nullptr || v->state->kind == Kind::None)) return nullptr;
  if (v->state == nullptr) d.fail(v, named(ctx, name) + " without state");
  return v->state;
}

std::string field_context(const std::string& ctx, std::string_view name) {
  return ctx.empty() ? std::string(name) : ctx + "." + std::string(name);
}

std::string named(const std::string& ctx, std::string_view class_name) {
  return ctx.empty() ? std::string(class_name) : ctx + ": " + std::string(class_name);
}

}  // namespace shardkit::dcp::detail
