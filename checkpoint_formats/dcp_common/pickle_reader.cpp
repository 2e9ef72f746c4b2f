// The restricted unpickler behind read_metadata: opcodes to a Value tree, nothing called.
//
// Safety rules, each enforced here rather than trusted to the input:
// - a global outside the DCP whitelist stops parsing at once, named in the message;
// - every length is compared with the bytes left before anything is read or allocated, so
//   memory stays proportional to the input (at most one Value per opcode);
// - stack pops respect the innermost MARK as CPython's do ("stack underflow"), memo
//   indices must exist, and the parse loop only moves forward, so it always ends.
#include <cstring>
#include <unordered_map>

#include "pickle_ops.hpp"
#include "pickle_value.hpp"
#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp::detail {
namespace {

class Machine {
 public:
  Machine(std::string_view in, const std::string& file) : in_(in), file_(file) {}

  Unpickled run() {
    while (true) {
      op_pos_ = pos_;
      if (pos_ >= in_.size()) fail("truncated: the pickle ends without a STOP opcode");
      const char code = in_[pos_++];
      if (code == op::STOP) {
        out_.root = pop();
        return std::move(out_);
      }
      step(code);
    }
  }

 private:
  std::string_view in_;
  const std::string& file_;
  std::size_t pos_ = 0;
  std::size_t op_pos_ = 0;
  Unpickled out_;
  std::vector<Value*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Value*> memo_;

  [[noreturn]] void fail(const std::string& what) const {
    throw MetadataError(file_ + ": " + what + " (at byte " + std::to_string(op_pos_) + ")");
  }

  const char* take(std::uint64_t n) {
    if (n > in_.size() - pos_) {
      fail("truncated: needs " + std::to_string(n) + " more bytes, " +
           std::to_string(in_.size() - pos_) + " left");
    }
    const char* p = in_.data() + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }
  std::uint64_t read_le(int bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(take(static_cast<std::uint64_t>(bytes)));
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  std::string_view read_line() {
    const std::size_t nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("truncated: GLOBAL name without a newline");
    std::string_view line = in_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return line;
  }

  Value* make(Kind kind) {
    out_.arena.push_back(std::make_unique<Value>());
    Value* v = out_.arena.back().get();
    v->kind = kind;
    v->offset = op_pos_;
    return v;
  }
  void push(Value* v) { stack_.push_back(v); }
  std::size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }
  Value* pop() {
    if (stack_.size() <= fence()) fail("unpickling stack underflow");
    Value* v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Value* top() {
    if (stack_.size() <= fence()) fail("unpickling stack underflow");
    return stack_.back();
  }
  std::vector<Value*> pop_mark() {
    if (marks_.empty()) fail("opcode needs a MARK and there is none");
    const std::size_t at = marks_.back();
    marks_.pop_back();
    std::vector<Value*> items(stack_.begin() + static_cast<std::ptrdiff_t>(at), stack_.end());
    stack_.resize(at);
    return items;
  }

  Value* make_str(Kind kind, std::uint64_t n) {
    const char* p = take(n);
    Value* v = make(kind);
    v->text.assign(p, static_cast<std::size_t>(n));
    if (kind == Kind::Str) {
      if (const std::size_t bad = utf8_error(v->text); bad != std::string_view::npos) {
        fail("str is not valid UTF-8 (its byte " + std::to_string(bad) + ")");
      }
    }
    return v;
  }
  void push_int(std::int64_t x) {
    Value* v = make(Kind::Int);
    v->integer = x;
    push(v);
  }
  void push_long(std::uint64_t n) {
    if (n > 8) fail("integer of " + std::to_string(n) + " bytes does not fit in int64");
    const auto* p = reinterpret_cast<const unsigned char*>(take(n));
    std::uint64_t u = 0;
    for (std::uint64_t i = n; i-- > 0;) u = (u << 8) | p[i];
    if (n > 0 && n < 8 && (p[n - 1] & 0x80)) u |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    push_int(static_cast<std::int64_t>(u));
  }
  void push_tuple(std::vector<Value*> items) {
    Value* v = make(Kind::Tuple);
    v->items = std::move(items);
    push(v);
  }
  void push_global(std::string module, std::string name) {
    GlobalKind kind{};
    if (!resolve_global(module, name, kind)) {
      fail("refusing pickle global '" + printable(module, 200) + "." + printable(name, 200) +
           "': DCP metadata never uses it (only torch.distributed.checkpoint metadata classes, "
           "torch dtypes/Size/layouts and pathlib paths are accepted)");
    }
    Value* v = make(Kind::Global);
    v->text = std::move(module);
    v->name = std::move(name);
    v->global = kind;
    push(v);
  }
  void set_items(Value* dict, const std::vector<Value*>& kv) {
    if (dict->kind != Kind::Dict)
      fail(std::string("SETITEM(S) on a ") + kind_name(dict->kind) + ", not a dict");
    if (kv.size() % 2 != 0) fail("SETITEMS with an odd number of stack items");
    for (std::size_t i = 0; i < kv.size(); i += 2) dict->entries.emplace_back(kv[i], kv[i + 1]);
  }
  void memo_put(std::uint64_t index) { memo_[index] = top(); }
  void memo_get(std::uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail("memo entry " + std::to_string(index) + " was never stored");
    push(it->second);
  }

  void step(char code) {
    switch (code) {
      case op::PROTO: {
        const auto proto = read_le(1);
        if (proto > 5) fail("unsupported pickle protocol " + std::to_string(proto));
        return;
      }
      case op::FRAME: {
        // Frames only group opcodes for buffered reading; the length must still be sane.
        const auto n = read_le(8);
        if (n > in_.size() - pos_) fail("truncated: FRAME of " + std::to_string(n) + " bytes");
        return;
      }
      case op::MARK: marks_.push_back(stack_.size()); return;
      case op::POP:
        if (!marks_.empty() && marks_.back() == stack_.size()) {
          marks_.pop_back();  // CPython pops a MARK that sits on top of the stack
        } else {
          pop();
        }
        return;
      case op::POP_MARK: pop_mark(); return;
      case op::DUP: push(top()); return;
      case op::NONE: push(make(Kind::None)); return;
      case op::NEWTRUE:
      case op::NEWFALSE: {
        Value* v = make(Kind::Bool);
        v->boolean = code == op::NEWTRUE;
        push(v);
        return;
      }
      case op::BININT1: push_int(static_cast<std::int64_t>(read_le(1))); return;
      case op::BININT2: push_int(static_cast<std::int64_t>(read_le(2))); return;
      case op::BININT:
        push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4))));
        return;
      case op::LONG1: push_long(read_le(1)); return;
      case op::LONG4: {
        const auto n = static_cast<std::int32_t>(static_cast<std::uint32_t>(read_le(4)));
        if (n < 0) fail("LONG4 with a negative byte count");
        push_long(static_cast<std::uint64_t>(n));
        return;
      }
      case op::BINFLOAT: {
        const auto* p = reinterpret_cast<const unsigned char*>(take(8));
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];  // big-endian
        Value* v = make(Kind::Float);
        std::memcpy(&v->real, &bits, sizeof bits);
        push(v);
        return;
      }
      case op::SHORT_BINUNICODE: push(make_str(Kind::Str, read_le(1))); return;
      case op::BINUNICODE: push(make_str(Kind::Str, read_le(4))); return;
      case op::BINUNICODE8: push(make_str(Kind::Str, read_le(8))); return;
      case op::SHORT_BINBYTES: push(make_str(Kind::Bytes, read_le(1))); return;
      case op::BINBYTES: push(make_str(Kind::Bytes, read_le(4))); return;
      case op::BINBYTES8: push(make_str(Kind::Bytes, read_le(8))); return;
      case op::EMPTY_TUPLE: push_tuple({}); return;
      case op::TUPLE1:
      case op::TUPLE2:
      case op::TUPLE3: {
        const std::size_t n = static_cast<std::size_t>(code - op::TUPLE1) + 1;
        std::vector<Value*> items(n);
        for (std::size_t i = n; i-- > 0;) items[i] = pop();
        push_tuple(std::move(items));
        return;
      }
      case op::TUPLE: push_tuple(pop_mark()); return;
      case op::EMPTY_LIST: push(make(Kind::List)); return;
      case op::LIST: {
        Value* v = make(Kind::List);
        v->items = pop_mark();
        push(v);
        return;
      }
      case op::APPEND: {
        Value* item = pop();
        Value* list = top();
        if (list->kind != Kind::List)
          fail(std::string("APPEND to a ") + kind_name(list->kind) + ", not a list");
        list->items.push_back(item);
        return;
      }
      case op::APPENDS: {
        std::vector<Value*> items = pop_mark();
        Value* list = top();
        if (list->kind != Kind::List)
          fail(std::string("APPENDS to a ") + kind_name(list->kind) + ", not a list");
        list->items.insert(list->items.end(), items.begin(), items.end());
        return;
      }
      case op::EMPTY_DICT: push(make(Kind::Dict)); return;
      case op::DICT: {
        std::vector<Value*> kv = pop_mark();
        Value* dict = make(Kind::Dict);
        set_items(dict, kv);
        push(dict);
        return;
      }
      case op::SETITEM: {
        Value* value = pop();
        Value* key = pop();
        set_items(top(), {key, value});
        return;
      }
      case op::SETITEMS: {
        std::vector<Value*> kv = pop_mark();
        set_items(top(), kv);
        return;
      }
      case op::GLOBAL: {
        std::string module(read_line());
        std::string name(read_line());
        push_global(std::move(module), std::move(name));
        return;
      }
      case op::STACK_GLOBAL: {
        Value* name = pop();
        Value* module = pop();
        if (module->kind != Kind::Str || name->kind != Kind::Str)
          fail("STACK_GLOBAL needs two str");
        push_global(module->text, name->text);
        return;
      }
      case op::REDUCE:
      case op::NEWOBJ: {
        Value* args = pop();
        Value* callable = pop();
        const char* what = code == op::REDUCE ? "REDUCE" : "NEWOBJ";
        if (callable->kind != Kind::Global)
          fail(std::string(what) + " of a " + kind_name(callable->kind) + ", not a global");
        if (args->kind != Kind::Tuple)
          fail(std::string(what) + " with " + kind_name(args->kind) + " arguments, not a tuple");
        if (callable->global == GlobalKind::OrderedDict) {
          if (!args->items.empty()) fail("collections.OrderedDict with arguments");
          push(make(Kind::Dict));  // its items follow as SETITEMS
          return;
        }
        Value* obj = make(Kind::Object);
        obj->callable = callable;
        obj->args = args;
        obj->newobj = code == op::NEWOBJ;
        push(obj);
        return;
      }
      case op::BUILD: {
        Value* state = pop();
        Value* obj = top();
        if (obj->kind != Kind::Object)
          fail(std::string("BUILD on a ") + kind_name(obj->kind) + ", not an object");
        if (obj->state != nullptr) fail("BUILD twice on one " + obj->callable->name);
        obj->state = state;
        return;
      }
      case op::BINPUT: memo_put(read_le(1)); return;
      case op::LONG_BINPUT: memo_put(read_le(4)); return;
      case op::MEMOIZE: memo_put(memo_.size()); return;
      case op::BINGET: memo_get(read_le(1)); return;
      case op::LONG_BINGET: memo_get(read_le(4)); return;
      default: {
        const auto c = static_cast<unsigned char>(code);
        static const char* hex = "0123456789abcdef";
        fail(std::string("unsupported pickle opcode 0x") + hex[c >> 4] + hex[c & 15] +
             " (not one Python writes for DCP metadata)");
      }
    }
  }
};

}  // namespace

Unpickled unpickle(std::string_view bytes, const std::string& file) {
  return Machine(bytes, file).run();
}

}  // namespace shardkit::dcp::detail
