// DCP byte items: ObjectValue <-> torch.save blob through LibTorch's pickler (the same zip
// container and protocol-2 pickle Python's torch.save writes).
#include "object_item.hpp"

#include <sstream>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "shardkit/error.hpp"

namespace shardkit::dcp {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

c10::IValue to_ivalue(const ObjectValue& value) {
  return std::visit(
      Overloaded{[](std::monostate) { return c10::IValue(); },
                 [](bool v) { return c10::IValue(v); },
                 [](std::int64_t v) { return c10::IValue(v); },
                 [](double v) { return c10::IValue(v); },
                 [](const std::string& v) { return c10::IValue(v); },
                 [](const std::vector<double>& v) {
                   std::vector<c10::IValue> items(v.begin(), v.end());
                   return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
                 },
                 [](const std::vector<std::string>& v) {
                   c10::List<std::string> list;
                   for (const auto& s : v) list.push_back(s);
                   return c10::IValue(list);
                 }},
      value);
}

// A tuple or list of numbers as floats; false when an element is not a number.
bool numbers(c10::ArrayRef<c10::IValue> items, std::vector<double>& out) {
  for (const auto& item : items) {
    if (item.isDouble()) out.push_back(item.toDouble());
    else if (item.isInt()) out.push_back(static_cast<double>(item.toInt()));
    else return false;
  }
  return true;
}

}  // namespace

std::vector<char> encode_object(const ObjectValue& value) { return torch::jit::pickle_save(to_ivalue(value)); }

ObjectValue decode_object(const std::vector<char>& blob, const std::string& where) {
  c10::IValue v;
  try {
    v = torch::jit::pickle_load(blob);
  } catch (const std::exception& e) {
    const std::string text = e.what();
    throw FormatError(where + ": not a torch.save value (" + text.substr(0, text.find('\n')) + ")");
  }
  if (v.isNone()) return std::monostate{};
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt();
  if (v.isDouble()) return v.toDouble();
  if (v.isString()) return v.toStringRef();
  std::vector<double> floats;
  if (v.isTuple() && numbers(v.toTupleRef().elements(), floats)) return floats;
  if (v.isList()) {
    const auto list = v.toListRef();
    std::vector<std::string> strings;
    for (const auto& item : list)
      if (item.isString()) strings.push_back(item.toStringRef());
    if (!list.empty() && strings.size() == list.size()) return strings;
    if (numbers(list, floats)) return floats;
  }
  throw FormatError(where + ": holds a " + v.tagKind() +
                    " value; shardkit reads None, bool, int, float, str, number tuples and str lists");
}

std::string object_text(const ObjectValue& value) {
  std::ostringstream out;
  out.precision(17);
  std::visit(Overloaded{[&](std::monostate) { out << "None"; },
                        [&](bool v) { out << (v ? "True" : "False"); },
                        [&](std::int64_t v) { out << v; },
                        [&](double v) { out << v; },
                        [&](const std::string& v) { out << '\'' << v << '\''; },
                        [&](const std::vector<double>& v) {
                          out << '(';
                          for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
                          out << (v.size() == 1 ? ",)" : ")");
                        },
                        [&](const std::vector<std::string>& v) {
                          out << '[';
                          for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", '" : "'") << v[i] << '\'';
                          out << ']';
                        }},
             value);
  return out.str();
}

}  // namespace shardkit::dcp
