// Added-token matching: leftmost-longest search, then single_word / lstrip / rstrip as tokenizers applies them.
#include "added_tokens.hpp"

#include <algorithm>

#include "byte_level.hpp"
#include "normalizer.hpp"
#include "regex.hpp"

namespace shardkit::text {
namespace {

// Start of the last UTF-8 character of `s` (s non-empty).
std::size_t last_char_start(std::string_view s) {
  std::size_t at = s.size() - 1;
  while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)),
      // Rust regex's \w: alphabetic, marks, decimal digits, connector punctuation, joiners.
      word_char_(std::make_unique<Regex>("^[\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}]", "added tokens")) {
  raw_.by_first_byte.resize(256);
  normalized_.by_first_byte.resize(256);
  match_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    by_id_.emplace(tokens_[i].id, i);
    by_content_.emplace(tokens_[i].content, i);
    const bool normalized = tokens_[i].normalized;
    match_.push_back(normalized && normalizer ? normalizer->normalize(tokens_[i].content) : tokens_[i].content);
    if (match_[i].empty()) continue;
    auto& set = normalized ? normalized_ : raw_;
    set.by_first_byte[static_cast<unsigned char>(match_[i][0])].push_back(i);
    set.empty = false;
  }
  for (auto* set : {&raw_, &normalized_})
    for (auto& list : set->by_first_byte)
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return match_[a].size() > match_[b].size();
      });
}

AddedVocabulary::~AddedVocabulary() = default;

const AddedToken* AddedVocabulary::by_id(std::uint32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedVocabulary::by_content(std::string_view content) const {
  const auto it = by_content_.find(content);
  return it == by_content_.end() ? nullptr : &tokens_[it->second];
}

void AddedVocabulary::split_raw(std::string_view text, std::vector<Segment>& out) const {
  find(text, 0, raw_, out);
}

void AddedVocabulary::split_normalized(std::string_view text, std::vector<Segment>& out) const {
  find(text, 0, normalized_, out);
}

void AddedVocabulary::find(std::string_view text, std::size_t base, const Set& set, std::vector<Segment>& out) const {
  if (set.empty || text.empty()) {
    if (!text.empty()) out.push_back({base, base + text.size(), -1});
    return;
  }
  const auto word_char = [&](std::string_view one_char) {
    std::vector<Span> m;
    word_char_->find_all(one_char, m);
    return !m.empty();
  };
  std::size_t done = 0;  // end of the last emitted segment
  std::size_t pos = 0;   // where the search resumes
  while (pos < text.size()) {
    const AddedToken* hit = nullptr;
    for (const auto i : set.by_first_byte[static_cast<unsigned char>(text[pos])])
      if (text.compare(pos, match_[i].size(), match_[i]) == 0) {
        hit = &tokens_[i];
        break;
      }
    if (!hit) {
      ++pos;
      continue;
    }
    std::size_t start = pos, stop = pos + match_[static_cast<std::size_t>(hit - tokens_.data())].size();
    pos = stop;
    if (hit->single_word) {
      const auto before = start > 0 ? last_char_start(text.substr(0, start)) : 0;
      const bool word_before = start > 0 && word_char(text.substr(before, start - before));
      std::size_t after = stop;
      if (stop < text.size()) next_code_point(text, after);
      const bool word_after = stop < text.size() && word_char(text.substr(stop, after - stop));
      if (word_before || word_after) continue;
    }
    if (hit->lstrip) {
      std::size_t s = start;
      while (s > 0) {
        const auto at = last_char_start(text.substr(0, s));
        std::size_t probe = at;
        if (!is_white_space(next_code_point(text, probe))) break;
        s = at;
      }
      start = std::max(s, done);
    }
    if (hit->rstrip) {
      while (stop < text.size()) {
        std::size_t probe = stop;
        if (!is_white_space(next_code_point(text, probe))) break;
        stop = probe;
      }
    }
    if (start > done) out.push_back({base + done, base + start, -1});
    out.push_back({base + start, base + stop, hit->id});
    done = stop;
  }
  if (done < text.size()) out.push_back({base + done, base + text.size(), -1});
}

}  // namespace shardkit::text
