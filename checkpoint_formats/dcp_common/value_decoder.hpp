// Decoder: typed reads of the unpickled tree for read_metadata, each checked and charged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pickle_value.hpp"

namespace shardkit::dcp::detail {

// Every read checks the value's kind and, on a mismatch, throws MetadataError naming the
// file, `ctx` (the field path, e.g. "state_dict_metadata['w'].size") and the byte offset.
class Decoder {
 public:
  // `file` names the input in messages and must outlive the Decoder.
  Decoder(const std::string& file, std::size_t input_size);

  [[noreturn]] void fail(const Value* at, const std::string& what) const;
  void expect(const Value* v, Kind kind, const std::string& ctx) const;

  std::string str(const Value* v, const std::string& ctx);
  std::int64_t integer(const Value* v, const std::string& ctx);
  bool boolean(const Value* v, const std::string& ctx);
  // The items of a tuple or list.
  const std::vector<Value*>& sequence(const Value* v, const std::string& ctx);
  // A tuple or list of ints.
  std::vector<std::int64_t> ints(const Value* v, const std::string& ctx);
  // The argument tuple of an object made by `maker` (a global of that kind) with REDUCE
  // (reduced = true) or NEWOBJ.
  const Value* object(const Value* v, GlobalKind maker, bool reduced, const std::string& ctx);

 private:
  const std::string& file_;
  // Decoding may copy a shared object once per reference (Python shares strings, layouts
  // and enum members that way); the budget keeps hostile sharing (one huge object referenced
  // from everywhere) from turning a small file into gigabytes: DCP's own files need a few
  // bytes of output per input byte.
  std::size_t budget_;

  void charge(std::size_t bytes, const Value* at);
};

}  // namespace shardkit::dcp::detail
