// Normalizers with their alignment to the original text; Unicode forms and case mapping by utf8proc.
#include "normalizer.hpp"

#include <utf8proc.h>

#include <cstdlib>

#include "byte_level.hpp"
#include "regex.hpp"
#include "shardkit/error.hpp"

namespace shardkit::text {
namespace {

/// `text` in the normalization form that `options` name (valid UTF-8 in, UTF-8 out).
std::string utf8proc_form(std::string_view text, int options) {
  if (text.empty()) return {};
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) throw FormatError(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return result;
}

int options_of(UnicodeForm form) {
  switch (form) {
    case UnicodeForm::NFC: return UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    case UnicodeForm::NFD: return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
    case UnicodeForm::NFKC: return UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    case UnicodeForm::NFKD: return UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  }
  return 0;
}

bool is_starter(std::uint32_t c) { return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class == 0; }

}  // namespace

NormalizedText NormalizedText::of(std::string_view original) {
  NormalizedText t;
  t.text.assign(original);
  t.ends.resize(original.size());
  for (std::size_t at = 0; at < original.size();) {
    const auto begin = at;
    next_code_point(original, at);
    for (auto i = begin; i < at; ++i) t.ends[i] = static_cast<std::uint32_t>(at);
  }
  return t;
}

Normalizer::~Normalizer() = default;

std::string Normalizer::normalize(std::string_view text) const {
  auto t = NormalizedText::of(text);
  apply(t);
  return std::move(t.text);
}

void UnicodeNormalizer::apply(NormalizedText& t) const {
  const int options = options_of(form_);
  auto whole = utf8proc_form(t.text, options);
  if (whole == t.text) return;
  // The alignment, run by run: a run is a starter and the combining marks after it, the unit
  // that composition and reordering work within. Each output byte of a run is aligned to the
  // run's end.
  NormalizedText out;
  out.text.reserve(whole.size());
  out.ends.reserve(whole.size());
  for (std::size_t begin = 0; begin < t.text.size();) {
    std::size_t end = begin;
    next_code_point(t.text, end);
    for (std::size_t probe = end; probe < t.text.size(); end = probe) {
      const auto c = next_code_point(t.text, probe);
      if (is_starter(c)) break;
    }
    const auto piece = utf8proc_form(std::string_view(t.text).substr(begin, end - begin), options);
    out.text += piece;
    out.ends.insert(out.ends.end(), piece.size(), t.ends[end - 1]);
    begin = end;
  }
  if (out.text != whole) {
    // Starters that compose with each other (Hangul jamo): the whole text's form, each byte
    // aligned to the byte at the same place or the last one.
    out.text = std::move(whole);
    out.ends.resize(out.text.size());
    for (std::size_t i = 0; i < out.ends.size(); ++i) out.ends[i] = t.ends[std::min(i, t.ends.size() - 1)];
  }
  t = std::move(out);
}

void LowercaseNormalizer::apply(NormalizedText& t) const {
  NormalizedText out;
  out.text.reserve(t.text.size());
  out.ends.reserve(t.text.size());
  for (std::size_t at = 0; at < t.text.size();) {
    const auto c = next_code_point(t.text, at);
    const auto size = out.text.size();
    if (c == 0x130) {  // the one unconditional multi-character lowercase mapping: İ -> i + U+0307
      out.text += "i\xCC\x87";
    } else {
      append_utf8(static_cast<std::uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))), out.text);
    }
    out.ends.insert(out.ends.end(), out.text.size() - size, t.ends[at - 1]);
  }
  t = std::move(out);
}

void PrependNormalizer::apply(NormalizedText& t) const {
  if (t.text.empty()) return;
  t.text.insert(0, prefix_);
  t.ends.insert(t.ends.begin(), prefix_.size(), 0);
}

ReplaceNormalizer::ReplaceNormalizer(const std::string& regex, std::string content, const std::string& what)
    : regex_(std::make_unique<Regex>(regex, what)), content_(std::move(content)) {}

ReplaceNormalizer::~ReplaceNormalizer() = default;

void ReplaceNormalizer::apply(NormalizedText& t) const {
  std::vector<Span> matches;
  regex_->find_all(t.text, matches);
  if (matches.empty()) return;
  NormalizedText out;
  std::size_t prev = 0;
  const auto keep = [&](std::size_t begin, std::size_t end) {
    out.text.append(t.text, begin, end - begin);
    out.ends.insert(out.ends.end(), t.ends.begin() + static_cast<std::ptrdiff_t>(begin),
                    t.ends.begin() + static_cast<std::ptrdiff_t>(end));
  };
  for (const auto& m : matches) {
    keep(prev, m.begin);
    out.text += content_;
    out.ends.insert(out.ends.end(), content_.size(), t.ends[m.end - 1]);
    prev = m.end;
  }
  keep(prev, t.text.size());
  t = std::move(out);
}

void StripNormalizer::apply(NormalizedText& t) const {
  std::size_t begin = 0, end = t.text.size();
  if (left_)
    while (begin < end) {
      std::size_t probe = begin;
      if (!is_white_space(next_code_point(t.text, probe))) break;
      begin = probe;
    }
  if (right_)
    while (end > begin) {
      std::size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(t.text[start]) & 0xC0) == 0x80) --start;
      std::size_t probe = start;
      if (!is_white_space(next_code_point(t.text, probe))) break;
      end = start;
    }
  if (begin == 0 && end == t.text.size()) return;
  t.text = t.text.substr(begin, end - begin);
  t.ends = std::vector<std::uint32_t>(t.ends.begin() + static_cast<std::ptrdiff_t>(begin),
                                      t.ends.begin() + static_cast<std::ptrdiff_t>(end));
}

void SequenceNormalizer::apply(NormalizedText& t) const {
  for (const auto& step : steps_) step->apply(t);
}

}  // namespace shardkit::text
