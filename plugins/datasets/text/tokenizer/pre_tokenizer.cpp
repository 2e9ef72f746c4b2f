// Pre-tokenizer steps: regex splitting with tokenizers' behaviours and the byte-level mapping.
#include "pre_tokenizer.hpp"

#include "byte_level.hpp"

namespace shardkit::text {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

PreTokenizer::~PreTokenizer() = default;

SplitPreTokenizer::SplitPreTokenizer(const std::string& regex, SplitBehavior behavior, bool invert,
                                     const std::string& what)
    : regex_(regex, what), behavior_(behavior), invert_(invert) {}

void SplitPreTokenizer::apply(std::vector<std::string>& pieces) const {
  std::vector<std::string> out;
  out.reserve(pieces.size() * 4);
  std::vector<Span> matches;
  for (const auto& piece : pieces) {
    matches.clear();
    regex_.find_all(piece, matches);
    std::size_t prev = 0;
    const auto emit = [&](std::size_t begin, std::size_t end, bool is_match) {
      if (begin == end) return;
      if (invert_) is_match = !is_match;
      if (is_match && behavior_ == SplitBehavior::Removed) return;
      out.emplace_back(piece, begin, end - begin);
    };
    for (const auto& m : matches) {
      emit(prev, m.begin, false);
      emit(m.begin, m.end, true);
      prev = m.end;
    }
    emit(prev, piece.size(), false);
  }
  pieces = std::move(out);
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space) {
  if (use_regex)
    split_ = std::make_unique<SplitPreTokenizer>(kGpt2Pattern, SplitBehavior::Isolated, false, "ByteLevel pre-tokenizer");
}

void ByteLevelPreTokenizer::apply(std::vector<std::string>& pieces) const {
  if (add_prefix_space_)
    for (auto& p : pieces)
      if (!p.empty() && p[0] != ' ') p.insert(p.begin(), ' ');
  if (split_) split_->apply(pieces);
  std::string mapped;
  for (auto& p : pieces) {
    mapped.clear();
    append_byte_level(p, mapped);
    p.swap(mapped);
  }
}

SequencePreTokenizer::SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
    : steps_(std::move(steps)) {}

void SequencePreTokenizer::apply(std::vector<std::string>& pieces) const {
  for (const auto& step : steps_) step->apply(pieces);
}

bool SequencePreTokenizer::byte_level() const {
  for (const auto& step : steps_)
    if (step->byte_level()) return true;
  return false;
}

}  // namespace shardkit::text
