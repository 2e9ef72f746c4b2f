// Pre-tokenizer steps: regex splitting with tokenizers' behaviours and the byte-level mapping.
#include "pre_tokenizer.hpp"

#include <algorithm>

#include "byte_level.hpp"

namespace shardkit::text {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

PreTokenizer::~PreTokenizer() = default;

SplitPreTokenizer::SplitPreTokenizer(const std::string& regex, SplitBehavior behavior, bool invert,
                                     const std::string& what)
    : regex_(regex, what), behavior_(behavior), invert_(invert) {}

namespace {

/// A piece of a piece: [begin, end), and whether it is a match of the pattern.
struct Part {
  std::size_t begin, end;
  bool match;
};

/// `parts` (covering a text in order) merged as `behavior` says; removed parts are left out.
void apply_behavior(std::vector<Part>& parts, SplitBehavior behavior) {
  std::vector<Part> out;
  out.reserve(parts.size());
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      out = parts;
      break;
    case SplitBehavior::Removed:
      for (const auto& p : parts)
        if (!p.match) out.push_back(p);
      break;
    case SplitBehavior::Contiguous:
      for (const auto& p : parts) {
        if (p.match == previous_match && !out.empty()) out.back().end = p.end;
        else out.push_back(p);
        previous_match = p.match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const auto& p : parts) {
        if (p.match && !previous_match && !out.empty()) out.back().end = p.end;
        else out.push_back(p);
        previous_match = p.match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto p = parts.rbegin(); p != parts.rend(); ++p) {
        if (p->match && !previous_match && !out.empty()) out.back().begin = p->begin;
        else out.push_back(*p);
        previous_match = p->match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  parts = std::move(out);
}

/// Splits each piece at the `matches` that `find` gives, as `behavior` says; empty pieces are dropped.
template <class Find>
void split_pieces(std::vector<std::string>& pieces, SplitBehavior behavior, bool invert, const Find& find) {
  std::vector<std::string> out;
  out.reserve(pieces.size() * 4);
  std::vector<Span> matches;
  std::vector<Part> parts;
  for (const auto& piece : pieces) {
    matches.clear();
    find(piece, matches);
    parts.clear();
    std::size_t prev = 0;
    for (const auto& m : matches) {
      if (m.begin > prev) parts.push_back({prev, m.begin, invert});
      parts.push_back({m.begin, m.end, !invert});
      prev = m.end;
    }
    if (prev < piece.size() || parts.empty()) parts.push_back({prev, piece.size(), invert});
    apply_behavior(parts, behavior);
    for (const auto& p : parts)
      if (p.end > p.begin) out.emplace_back(piece, p.begin, p.end - p.begin);
  }
  pieces = std::move(out);
}

}  // namespace

void SplitPreTokenizer::apply(std::vector<std::string>& pieces, bool) const {
  split_pieces(pieces, behavior_, invert_,
               [&](const std::string& piece, std::vector<Span>& matches) { regex_.find_all(piece, matches); });
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space) {
  if (use_regex)
    split_ = std::make_unique<SplitPreTokenizer>(kGpt2Pattern, SplitBehavior::Isolated, false, "ByteLevel pre-tokenizer");
}

void ByteLevelPreTokenizer::apply(std::vector<std::string>& pieces, bool at_start) const {
  if (add_prefix_space_)
    for (auto& p : pieces)
      if (!p.empty() && p[0] != ' ') p.insert(p.begin(), ' ');
  if (split_) split_->apply(pieces, at_start);
  std::string mapped;
  for (auto& p : pieces) {
    mapped.clear();
    append_byte_level(p, mapped);
    p.swap(mapped);
  }
}

MetaspacePreTokenizer::MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
    : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}

void MetaspacePreTokenizer::apply(std::vector<std::string>& pieces, bool at_start) const {
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    auto& p = pieces[i];
    std::string replaced;
    replaced.reserve(p.size() + replacement_.size());
    for (const char c : p) {
      if (c == ' ') replaced += replacement_;
      else replaced += c;
    }
    const bool prepend = scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && at_start && i == 0);
    if (prepend && replaced.compare(0, replacement_.size(), replacement_) != 0) replaced.insert(0, replacement_);
    p = std::move(replaced);
  }
  if (!split_) return;
  // Each replacement character starts a piece (tokenizers' MergedWithNext).
  split_pieces(pieces, SplitBehavior::MergedWithNext, false, [&](const std::string& piece, std::vector<Span>& matches) {
    for (auto at = piece.find(replacement_); at != std::string::npos; at = piece.find(replacement_, at + replacement_.size()))
      matches.push_back({at, at + replacement_.size()});
  });
}

SequencePreTokenizer::SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
    : steps_(std::move(steps)) {}

void SequencePreTokenizer::apply(std::vector<std::string>& pieces, bool at_start) const {
  for (const auto& step : steps_) step->apply(pieces, at_start);
}

std::string SequencePreTokenizer::metaspace_replacement() const {
  for (const auto& step : steps_)
    if (auto r = step->metaspace_replacement(); !r.empty()) return r;
  return {};
}

bool SequencePreTokenizer::byte_level() const {
  for (const auto& step : steps_)
    if (step->byte_level()) return true;
  return false;
}

}  // namespace shardkit::text
