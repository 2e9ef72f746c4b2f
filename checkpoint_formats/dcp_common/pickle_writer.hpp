// Low half of write_metadata: protocol 4 opcodes, framed and memoized as CPython's pickler does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pickle_ops.hpp"

namespace shardkit::dcp::detail {

// Every save_* call (and every boundary() call made by a composite save in the encoder)
// stands for one call of CPython's save(), whose start is where a frame that reached
// kFrameSizeTarget gets closed. Keeping the calls one to one is what makes frame
// boundaries, and so the bytes, match Python's.
class PickleWriter {
 public:
  PickleWriter();                             // writes PROTO 4 and starts framing
  std::string finish();                       // STOP, the last frame; the writer is spent after
  void boundary();                            // the start of a save(): close a full frame
  void emit(char code);                       // one opcode byte, inside the current frame
  std::uint32_t memoize();                    // MEMOIZE; returns the memo index it takes
  bool get_memoized(const std::string& key);  // BINGET of `key` if remembered
  void remember(const std::string& key, std::uint32_t index);

  void save_none();
  void save_bool(bool b);
  void save_int(std::int64_t v);
  // A str. `identity` names the Python object it stands for: a second save with the same
  // identity is a BINGET. Empty: a new object each time. `what` is for messages.
  void save_str(const std::string& s, const std::string& identity, std::string_view what);
  // A module-level object by name (STACK_GLOBAL), memoized. `module_group` keeps apart
  // module strings that are distinct objects in Python although equal.
  void save_global(std::string_view module, std::string_view name,
                   std::string_view module_group = {});
  // A tuple of ints (see save_tuple).
  void save_int_tuple(const std::vector<std::int64_t>& v);

  // Whether CPython keeps one object per value of `s`: interned identifier-like constants
  // (its all_name_chars rule) and the cached empty and one-character (latin-1) strings.
  static bool python_shares(const std::string& s);
  // The identity of a string playing `role`, unless CPython shares it by value anyway.
  static std::string identity(std::string_view role, const std::string& s) {
    return python_shares(s) ? "I:" + s : std::string(role) + ":" + s;
  }

  // EMPTY_DICT, then SETITEM for one entry or batches of MARK ... SETITEMS. CPython's
  // batch loop writes one more, empty batch when the size is a multiple of the batch.
  template <class Entries, class SaveEntry>
  void save_dict(const Entries& entries, SaveEntry save_entry) {
    boundary();
    emit(op::EMPTY_DICT);
    memoize();
    if (entries.empty()) return;
    if (entries.size() == 1) {
      save_entry(*entries.begin());
      emit(op::SETITEM);
      return;
    }
    auto it = entries.begin();
    std::size_t in_batch = 0;
    do {
      emit(op::MARK);
      in_batch = 0;
      while (it != entries.end()) {
        save_entry(*it++);
        if (++in_batch == kBatchSize) break;
      }
      emit(op::SETITEMS);
    } while (in_batch == kBatchSize);
  }

  // A tuple: EMPTY_TUPLE (a constant Python never memoizes), the items then TUPLE1-3, or
  // MARK, the items, TUPLE; a non-empty tuple is memoized.
  template <class Items, class SaveItem>
  void save_tuple(const Items& items, SaveItem save_item) {
    boundary();
    if (items.empty()) {
      emit(op::EMPTY_TUPLE);
      return;
    }
    const std::size_t n = items.size();
    if (n > 3) emit(op::MARK);
    for (const auto& item : items) save_item(item);
    emit(n == 1 ? op::TUPLE1 : n == 2 ? op::TUPLE2 : n == 3 ? op::TUPLE3 : op::TUPLE);
    memoize();
  }

  // EMPTY_LIST, then APPEND for one item or batches of MARK ... APPENDS (no empty batch).
  template <class Items, class SaveItem>
  void save_list(const Items& items, SaveItem save_item) {
    boundary();
    emit(op::EMPTY_LIST);
    memoize();
    if (items.empty()) return;
    if (items.size() == 1) {
      save_item(*items.begin());
      emit(op::APPEND);
      return;
    }
    auto it = items.begin();
    while (it != items.end()) {
      emit(op::MARK);
      for (std::size_t k = 0; k < kBatchSize && it != items.end(); ++k) save_item(*it++);
      emit(op::APPENDS);
    }
  }

 private:
  std::string out_;
  std::size_t frame_start_ = std::string::npos;  // offset of the open frame's header slot
  std::uint32_t memo_size_ = 0;
  std::unordered_map<std::string, std::uint32_t> strings_;  // string identity -> memo index
  std::unordered_map<std::string, std::uint32_t> objects_;  // globals, layouts, enum members

  void write(const char* data, std::size_t n);
  void write_le(std::uint64_t v, int bytes);
  void commit_frame();
  void get(std::uint32_t index);
};

}  // namespace shardkit::dcp::detail
