// Pickle opcodes and the names DCP metadata pickles use, shared by the DCP writer and reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardkit::dcp::detail {

// Opcode bytes as Python's pickle module defines them (pickletools documents each one).
namespace op {
inline constexpr char MARK = '(';
inline constexpr char STOP = '.';
inline constexpr char POP = '0';
inline constexpr char POP_MARK = '1';
inline constexpr char DUP = '2';
inline constexpr char BININT = 'J';
inline constexpr char BININT1 = 'K';
inline constexpr char BININT2 = 'M';
inline constexpr char NONE = 'N';
inline constexpr char REDUCE = 'R';
inline constexpr char BINUNICODE = 'X';
inline constexpr char APPEND = 'a';
inline constexpr char BUILD = 'b';
inline constexpr char GLOBAL = 'c';
inline constexpr char DICT = 'd';
inline constexpr char EMPTY_DICT = '}';
inline constexpr char APPENDS = 'e';
inline constexpr char BINGET = 'h';
inline constexpr char LONG_BINGET = 'j';
inline constexpr char LIST = 'l';
inline constexpr char EMPTY_LIST = ']';
inline constexpr char BINPUT = 'q';
inline constexpr char LONG_BINPUT = 'r';
inline constexpr char SETITEM = 's';
inline constexpr char TUPLE = 't';
inline constexpr char EMPTY_TUPLE = ')';
inline constexpr char SETITEMS = 'u';
inline constexpr char BINFLOAT = 'G';
inline constexpr char BINBYTES = 'B';
inline constexpr char SHORT_BINBYTES = 'C';
inline constexpr char PROTO = '\x80';
inline constexpr char NEWOBJ = '\x81';
inline constexpr char TUPLE1 = '\x85';
inline constexpr char TUPLE2 = '\x86';
inline constexpr char TUPLE3 = '\x87';
inline constexpr char NEWTRUE = '\x88';
inline constexpr char NEWFALSE = '\x89';
inline constexpr char LONG1 = '\x8a';
inline constexpr char LONG4 = '\x8b';
inline constexpr char SHORT_BINUNICODE = '\x8c';
inline constexpr char BINUNICODE8 = '\x8d';
inline constexpr char BINBYTES8 = '\x8e';
inline constexpr char STACK_GLOBAL = '\x93';
inline constexpr char MEMOIZE = '\x94';
inline constexpr char FRAME = '\x95';
}  // namespace op

// CPython's framing (protocol 4+): a frame is closed once it holds this many bytes, and a
// payload this large is written outside any frame.
inline constexpr std::size_t kFrameSizeTarget = 64 * 1024;
// Frames smaller than this get no FRAME header.
inline constexpr std::size_t kFrameSizeMin = 4;
inline constexpr std::size_t kFrameHeaderSize = 9;
// pickle's _BATCHSIZE: items per MARK ... APPENDS / SETITEMS group.
inline constexpr std::size_t kBatchSize = 1000;

inline constexpr std::string_view kMetadataModule = "torch.distributed.checkpoint.metadata";
inline constexpr std::string_view kFilesystemModule = "torch.distributed.checkpoint.filesystem";
inline constexpr std::string_view kSerializationModule = "torch.serialization";

// Whether `name` is a torch layout (torch.<name>) that TensorProperties may carry.
bool is_known_layout(std::string_view name);

// The offset of the first byte where `s` stops being UTF-8 as Python's pickle accepts it
// (surrogate code points allowed: pickle uses the "surrogatepass" error handler), or npos.
std::size_t utf8_error(std::string_view s);

// `s` for an error message: control bytes (and, if `s` is not UTF-8, bytes >= 0x80) as
// \xNN, cut after about `max_bytes` bytes, so that input can never flood a message.
std::string printable(std::string_view s, std::size_t max_bytes = 80);

}  // namespace shardkit::dcp::detail
