// Ledger entries and snapshots: their text, signatures and JSON form.
#include "ledger_entry.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <chrono>

#include "shardkit/error.hpp"

namespace shardkit::ledger {
namespace json = boost::json;

std::string Entry::text() const {
  std::string t = op + " #" + std::to_string(seq) + " on '" + group + "'";
  if (!dtype.empty()) {
    t += " [";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    t += "] " + dtype;
  }
  t += " (" + (scope.empty() ? std::string() : scope + ", ") +
       (step > 0 ? "step " + std::to_string(step) : std::string("start-up")) + ")";
  return t;
}

namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL, kFnvPrime = 1099511628211ULL;

std::uint64_t fnv(std::uint64_t h, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

std::uint64_t fnv(std::uint64_t h, const std::string& s) {
  h = fnv(h, s.data(), s.size());
  return fnv(h, "\0", 1);  // a separator, so that ("ab", "c") and ("a", "bc") differ
}

}  // namespace

std::string group_kind(const std::string& group) { return group.substr(0, group.find('/')); }

std::uint64_t signature_of(const std::string& op, const std::string& group,
                           const std::vector<std::int64_t>& shape, const std::string& dtype,
                           const std::string& scope) {
  auto h = fnv(kFnvOffset, op);
  h = fnv(h, group_kind(group));
  for (const auto d : shape) h = fnv(h, &d, sizeof d);
  h = fnv(h, dtype);
  return fnv(h, scope);
}

std::uint64_t mix(std::uint64_t hash, std::uint64_t signature) {
  // splitmix64 of the pair: order matters, so that a swap of two collectives is seen.
  std::uint64_t z = hash * 31 + signature + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

const Entry* Snapshot::find(const std::string& group, std::uint64_t seq) const {
  for (const auto& e : entries)
    if (e.seq == seq && e.group == group) return &e;
  return nullptr;
}

namespace {

json::object entry_json(const Entry& e) {
  json::array shape;
  for (const auto d : e.shape) shape.emplace_back(d);
  json::object o;
  o["group"] = e.group;
  o["seq"] = e.seq;
  o["op"] = e.op;
  o["shape"] = std::move(shape);
  o["dtype"] = e.dtype;
  o["scope"] = e.scope;
  o["step"] = e.step;
  o["sig"] = std::to_string(e.signature);  // 64 bits: a JSON number would lose some
  o["at"] = e.issued_at;
  o["done"] = e.done;
  return o;
}

const json::value& field(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (!v) throw FormatError(std::string("collective ledger record without '") + key + "'");
  return *v;
}

std::string string_field(const json::object& o, const char* key) {
  return std::string(field(o, key).as_string());
}

Entry entry_from(const json::value& v) {
  const auto& o = v.as_object();
  Entry e;
  e.group = string_field(o, "group");
  e.seq = field(o, "seq").to_number<std::uint64_t>();
  e.op = string_field(o, "op");
  for (const auto& d : field(o, "shape").as_array()) e.shape.push_back(d.to_number<std::int64_t>());
  e.dtype = string_field(o, "dtype");
  e.scope = string_field(o, "scope");
  e.step = field(o, "step").to_number<std::int64_t>();
  e.signature = std::stoull(string_field(o, "sig"));
  e.issued_at = field(o, "at").to_number<double>();
  e.done = field(o, "done").as_bool();
  return e;
}

template <class F>
auto parsed(const std::string& text, F&& read) {
  try {
    return read(json::parse(text));
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError(std::string("unreadable collective ledger record: ") + e.what());
  }
}

}  // namespace

std::string to_json(const Snapshot& s) {
  json::object issued;
  for (const auto& [group, seq] : s.issued) issued[group] = seq;
  json::array entries;
  for (const auto& e : s.entries) entries.emplace_back(entry_json(e));
  json::object o;
  o["rank"] = s.rank;
  o["published_at"] = s.published_at;
  o["step"] = s.step;
  o["issued"] = std::move(issued);
  o["waiting_group"] = s.waiting_group;
  o["waiting_seq"] = s.waiting_seq;
  o["waiting_since"] = s.waiting_since;
  o["entries"] = std::move(entries);
  return json::serialize(o);
}

Snapshot snapshot_from_json(const std::string& text) {
  return parsed(text, [](const json::value& v) {
    const auto& o = v.as_object();
    Snapshot s;
    s.rank = field(o, "rank").to_number<int>();
    s.published_at = field(o, "published_at").to_number<double>();
    s.step = field(o, "step").to_number<std::int64_t>();
    for (const auto& [group, seq] : field(o, "issued").as_object())
      s.issued[std::string(group)] = seq.to_number<std::uint64_t>();
    s.waiting_group = string_field(o, "waiting_group");
    s.waiting_seq = field(o, "waiting_seq").to_number<std::uint64_t>();
    s.waiting_since = field(o, "waiting_since").to_number<double>();
    for (const auto& e : field(o, "entries").as_array()) s.entries.push_back(entry_from(e));
    return s;
  });
}

std::string to_json(const std::vector<Entry>& entries) {
  json::array a;
  for (const auto& e : entries) a.emplace_back(entry_json(e));
  return json::serialize(a);
}

std::vector<Entry> entries_from_json(const std::string& text) {
  return parsed(text, [](const json::value& v) {
    std::vector<Entry> entries;
    for (const auto& e : v.as_array()) entries.push_back(entry_from(e));
    return entries;
  });
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace shardkit::ledger
