// Strict UTF-8 validation and small shape helpers shared by the safetensors reader and writer.
#include "format_internal.hpp"

namespace shardkit::safetensors::detail {

std::size_t invalid_utf8_offset(const char* text, std::size_t size) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  std::size_t i = 0;
  while (i < size) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (size - i < len) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return size;
}

bool checked_nbytes(const std::vector<int64_t>& shape, DType dtype, std::uint64_t* nbytes) {
  // Same arithmetic as the reference: element count left to right, then bits, each step
  // checked, so a file it refuses for overflow is refused here too.
  std::uint64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return false;
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements)) return false;
  }
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dtype_size(dtype) * 8), &bits)) {
    return false;
  }
  *nbytes = bits / 8;
  return true;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace shardkit::safetensors::detail
