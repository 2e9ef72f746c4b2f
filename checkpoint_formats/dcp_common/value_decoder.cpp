// Decoder: the kind checks, the output budget and the messages of read_metadata.
#include "value_decoder.hpp"

#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp::detail {

Decoder::Decoder(const std::string& file, std::size_t input_size)
    : file_(file), budget_(64 * input_size + (std::size_t{1} << 20)) {}

void Decoder::charge(std::size_t bytes, const Value* at) {
  if (bytes > budget_) {
    fail(at,
         "decoded metadata would be over 64 times the file's size (the file shares objects "
         "far more than DCP does)");
  }
  budget_ -= bytes;
}

void Decoder::fail(const Value* at, const std::string& what) const {
  throw MetadataError(file_ + ": " + what + " (object made at byte " +
                      std::to_string(at->offset) + ")");
}

void Decoder::expect(const Value* v, Kind kind, const std::string& ctx) const {
  if (v->kind != kind) {
    fail(v, ctx + ": expected " + kind_name(kind) + ", got " + kind_name(v->kind));
  }
}

std::string Decoder::str(const Value* v, const std::string& ctx) {
  expect(v, Kind::Str, ctx);
  charge(v->text.size() + 16, v);
  return v->text;
}

std::int64_t Decoder::integer(const Value* v, const std::string& ctx) {
  expect(v, Kind::Int, ctx);
  charge(8, v);
  return v->integer;
}

bool Decoder::boolean(const Value* v, const std::string& ctx) {
  expect(v, Kind::Bool, ctx);
  charge(1, v);
  return v->boolean;
}

const std::vector<Value*>& Decoder::sequence(const Value* v, const std::string& ctx) {
  if (v->kind != Kind::Tuple && v->kind != Kind::List) {
    fail(v, ctx + ": expected a tuple or list, got " + kind_name(v->kind));
  }
  charge(16, v);
  return v->items;
}

std::vector<std::int64_t> Decoder::ints(const Value* v, const std::string& ctx) {
  std::vector<std::int64_t> out;
  const std::string item_ctx = ctx + " item";
  for (const Value* item : sequence(v, ctx)) out.push_back(integer(item, item_ctx));
  return out;
}

const Value* Decoder::object(const Value* v, GlobalKind maker, bool reduced,
                             const std::string& ctx) {
  if (v->kind != Kind::Object) {
    fail(v, ctx + ": expected " + global_kind_name(maker) + ", got " + kind_name(v->kind));
  }
  if (v->callable->global != maker || v->newobj == reduced) {
    fail(v, ctx + ": expected " + global_kind_name(maker) + (reduced ? " (REDUCE)" : " (NEWOBJ)") +
                ", got " + v->callable->text + "." + v->callable->name +
                (v->newobj ? " (NEWOBJ)" : " (REDUCE)"));
  }
  charge(48, v);
  return v->args;
}

}  // namespace shardkit::dcp::detail
