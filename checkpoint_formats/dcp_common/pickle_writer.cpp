// PickleWriter: protocol 4 opcodes, CPython's framing and memo, for write_metadata.
//
// Framing as CPython's C pickler does it (which is what pickle.dump runs): PROTO sits
// before the first frame; a frame is closed at the start of the first save() after it
// holds >= 64 KiB; a payload >= 64 KiB is written with its opcode header outside any
// frame; a last frame under 4 bytes gets no FRAME header.
#include "pickle_writer.hpp"

#include <cstdint>

#include "shardkit/dcp/metadata.hpp"

namespace shardkit::dcp::detail {

PickleWriter::PickleWriter() {
  out_.push_back(op::PROTO);
  out_.push_back('\x04');  // pickle.dump's default protocol (Python 3.8+), what DCP writes
}

std::string PickleWriter::finish() {
  emit(op::STOP);
  commit_frame();
  return std::move(out_);
}

void PickleWriter::write(const char* data, std::size_t n) {
  if (frame_start_ == std::string::npos) {
    frame_start_ = out_.size();
    out_.append(kFrameHeaderSize, '\0');
  }
  out_.append(data, n);
}

void PickleWriter::emit(char code) { write(&code, 1); }

void PickleWriter::write_le(std::uint64_t v, int bytes) {
  char buf[8];
  for (int i = 0; i < bytes; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  write(buf, static_cast<std::size_t>(bytes));
}

void PickleWriter::commit_frame() {
  if (frame_start_ == std::string::npos) return;
  const std::uint64_t len = out_.size() - frame_start_ - kFrameHeaderSize;
  if (len >= kFrameSizeMin) {
    out_[frame_start_] = op::FRAME;
    for (int i = 0; i < 8; ++i)
      out_[frame_start_ + 1 + i] = static_cast<char>((len >> (8 * i)) & 0xFF);
  } else {
    out_.erase(frame_start_, kFrameHeaderSize);
  }
  frame_start_ = std::string::npos;
}

void PickleWriter::boundary() {
  if (frame_start_ != std::string::npos &&
      out_.size() - frame_start_ - kFrameHeaderSize >= kFrameSizeTarget) {
    commit_frame();
  }
}

std::uint32_t PickleWriter::memoize() {
  emit(op::MEMOIZE);
  return memo_size_++;
}

void PickleWriter::get(std::uint32_t index) {
  if (index < 256) {
    const char buf[2] = {op::BINGET, static_cast<char>(index)};
    write(buf, 2);
  } else {
    emit(op::LONG_BINGET);
    write_le(index, 4);
  }
}

bool PickleWriter::get_memoized(const std::string& key) {
  const auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  get(it->second);
  return true;
}

void PickleWriter::remember(const std::string& key, std::uint32_t index) {
  objects_.emplace(key, index);
}

void PickleWriter::save_none() {
  boundary();
  emit(op::NONE);
}

void PickleWriter::save_bool(bool b) {
  boundary();
  emit(b ? op::NEWTRUE : op::NEWFALSE);
}

void PickleWriter::save_int(std::int64_t v) {
  boundary();
  if (v >= 0 && v <= 0xFF) {
    emit(op::BININT1);
    write_le(static_cast<std::uint64_t>(v), 1);
  } else if (v >= 0 && v <= 0xFFFF) {
    emit(op::BININT2);
    write_le(static_cast<std::uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    emit(op::BININT);
    write_le(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
  } else {
    // LONG1 with the shortest two's-complement little-endian form, as pickle.encode_long.
    int n = 8;
    while (n > 1) {
      const std::int64_t dropped = v >> (8 * (n - 1) - 1);  // must be all sign bits to drop a byte
      if (dropped != 0 && dropped != -1) break;
      --n;
    }
    emit(op::LONG1);
    write_le(static_cast<std::uint64_t>(n), 1);
    write_le(static_cast<std::uint64_t>(v), n);
  }
}

bool PickleWriter::python_shares(const std::string& s) {
  if (s.size() <= 1 || (s.size() == 2 && (s[0] == '\xC2' || s[0] == '\xC3'))) return true;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

void PickleWriter::save_str(const std::string& s, const std::string& identity,
                            std::string_view what) {
  boundary();
  if (!identity.empty()) {
    const auto it = strings_.find(identity);
    if (it != strings_.end()) {
      get(it->second);
      return;
    }
  }
  if (const std::size_t bad = utf8_error(s); bad != std::string_view::npos) {
    throw MetadataError("write_metadata: " + std::string(what) + " is not valid UTF-8 (byte " +
                        std::to_string(bad) + ")");
  }
  if (s.size() < 256) {
    emit(op::SHORT_BINUNICODE);
    write_le(s.size(), 1);
    write(s.data(), s.size());
  } else if (s.size() < kFrameSizeTarget) {
    emit(op::BINUNICODE);
    write_le(s.size(), 4);
    write(s.data(), s.size());
  } else {
    commit_frame();  // header and payload go unframed; the next opcode opens a new frame
    const bool fits4 = s.size() <= 0xFFFFFFFFull;
    out_.push_back(fits4 ? op::BINUNICODE : op::BINUNICODE8);
    for (int i = 0; i < (fits4 ? 4 : 8); ++i) {
      out_.push_back(static_cast<char>((static_cast<std::uint64_t>(s.size()) >> (8 * i)) & 0xFF));
    }
    out_.append(s);
  }
  const std::uint32_t index = memoize();
  if (!identity.empty()) strings_.emplace(identity, index);
}

void PickleWriter::save_global(std::string_view module, std::string_view name,
                               std::string_view module_group) {
  boundary();
  const std::string key = "G:" + std::string(module) + ":" + std::string(name);
  if (get_memoized(key)) return;
  const std::string module_key = "M:" + std::string(module_group) + ":" + std::string(module);
  boundary();
  if (!get_memoized(module_key)) {
    save_str(std::string(module), {}, "module name");
    remember(module_key, memo_size_ - 1);
  }
  save_str(std::string(name), {}, "global name");
  emit(op::STACK_GLOBAL);
  remember(key, memoize());
}

void PickleWriter::save_int_tuple(const std::vector<std::int64_t>& v) {
  save_tuple(v, [this](std::int64_t x) { save_int(x); });
}

}  // namespace shardkit::dcp::detail
