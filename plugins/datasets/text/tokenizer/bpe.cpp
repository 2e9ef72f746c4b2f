// BPE merging with a rank-ordered priority queue over a linked list of symbols, and its cache.
#include "bpe.hpp"

#include <array>
#include <mutex>
#include <queue>

#include "shardkit/error.hpp"

namespace shardkit::text {
namespace {

constexpr std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  return (static_cast<std::uint64_t>(a) << 32) | b;
}

struct Symbol {
  std::uint32_t id;
  int prev, next;
  std::size_t len;  // bytes of the word covered; 0 once merged into its left neighbour
};

struct Candidate {
  std::uint32_t rank, new_id;
  int pos;
  // std::priority_queue pops the largest: make the lowest rank, then the leftmost, largest.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

constexpr std::size_t kCacheShards = 16;
constexpr std::size_t kCacheEntriesPerShard = 8192;
constexpr std::size_t kCacheMaxWordBytes = 256;

}  // namespace

struct Bpe::Cache {
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<std::uint32_t>, StringHash, std::equal_to<>> words;
  };
  std::array<Shard, kCacheShards> shards;
};

Bpe::Bpe(TokenMap vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeSettings settings,
         const std::string& source)
    : vocab_(std::move(vocab)), settings_(std::move(settings)), cache_(std::make_unique<Cache>()) {
  std::uint32_t max_id = 0;
  for (const auto& [token, id] : vocab_) max_id = std::max(max_id, id);
  by_id_.assign(vocab_.empty() ? 0 : max_id + 1, nullptr);
  for (const auto& [token, id] : vocab_) by_id_[id] = &token;
  const auto prefix_len = settings_.continuing_subword_prefix.size();
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const auto ia = vocab_.find(a), ib = vocab_.find(b);
    std::string merged = a + (b.compare(0, prefix_len, settings_.continuing_subword_prefix) == 0 ? b.substr(prefix_len) : b);
    const auto im = vocab_.find(merged);
    if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end())
      throw FormatError(source + ": merge " + std::to_string(rank) + " ('" + a + "' '" + b + "') names a token (" +
                        (ia == vocab_.end() ? a : ib == vocab_.end() ? b : merged) + ") that is not in the vocabulary");
    merges_[pair_key(ia->second, ib->second)] = {static_cast<std::uint32_t>(rank), im->second};
  }
  if (settings_.byte_fallback) {
    byte_ids_.assign(256, -1);
    static const char* const kHex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      const std::string name{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
      if (const auto it = vocab_.find(name); it != vocab_.end()) byte_ids_[b] = it->second;
    }
  }
  if (settings_.unk_token) {
    const auto it = vocab_.find(*settings_.unk_token);
    if (it == vocab_.end())
      throw FormatError(source + ": unk_token '" + *settings_.unk_token + "' is not in the vocabulary");
    unk_id_ = it->second;
  }
}

Bpe::~Bpe() = default;

std::optional<std::uint32_t> Bpe::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* Bpe::id_to_token(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }

void Bpe::tokenize(std::string_view word, std::vector<std::uint32_t>& out) const {
  if (word.empty()) return;
  if (settings_.ignore_merges) {
    if (const auto it = vocab_.find(word); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (word.size() > kCacheMaxWordBytes) {
    merge_word(word, out);
    return;
  }
  auto& shard = cache_->shards[StringHash{}(word) % kCacheShards];
  {
    std::lock_guard lock(shard.mutex);
    if (const auto it = shard.words.find(word); it != shard.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const auto first = out.size();
  merge_word(word, out);
  std::lock_guard lock(shard.mutex);
  if (shard.words.size() >= kCacheEntriesPerShard) shard.words.clear();
  shard.words.emplace(std::string(word), std::vector<std::uint32_t>(out.begin() + first, out.end()));
}

bool Bpe::byte_fallback_ids(std::string_view piece, std::vector<std::uint32_t>& ids) const {
  if (byte_ids_.empty()) return false;
  ids.clear();
  for (const char c : piece) {
    const auto id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) return false;
    ids.push_back(static_cast<std::uint32_t>(id));
  }
  return true;
}

void Bpe::merge_word(std::string_view word, std::vector<std::uint32_t>& out) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  // A pending run of unknown characters: its byte length (0 = none).
  std::size_t unk_len = 0;
  std::string piece;
  std::vector<std::uint32_t> fallback;
  const auto add = [&](std::uint32_t id, std::size_t len) {
    const int pos = static_cast<int>(symbols.size());
    symbols.push_back({id, pos - 1, pos + 1, len});
  };
  for (std::size_t at = 0; at < word.size();) {
    std::size_t end = at + 1;
    while (end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80) ++end;
    piece.clear();
    if (at > 0) piece += settings_.continuing_subword_prefix;
    piece.append(word.substr(at, end - at));
    if (end == word.size()) piece += settings_.end_of_word_suffix;
    if (const auto it = vocab_.find(piece); it != vocab_.end()) {
      if (unk_len) add(*unk_id_, unk_len);
      unk_len = 0;
      add(it->second, end - at);
    } else if (byte_fallback_ids(piece, fallback)) {
      // Every byte as its <0xXX> token; as tokenizers, a pending unknown run stays pending.
      for (const auto id : fallback) add(id, 1);
    } else if (unk_id_) {
      if (unk_len && !settings_.fuse_unk) {
        add(*unk_id_, unk_len);
        unk_len = 0;
      }
      unk_len += end - at;
    }  // no unk token: the character is dropped, as tokenizers does
    at = end;
  }
  if (unk_len) add(*unk_id_, unk_len);
  if (!symbols.empty()) symbols.back().next = -1;

  std::priority_queue<Candidate> queue;
  const auto push = [&](int pos) {
    const int next = symbols[pos].next;
    if (next < 0) return;
    if (const auto it = merges_.find(pair_key(symbols[pos].id, symbols[next].id)); it != merges_.end())
      queue.push({it->second.first, it->second.second, pos});
  };
  for (int pos = 0; pos + 1 < static_cast<int>(symbols.size()); ++pos) push(pos);
  while (!queue.empty()) {
    const auto top = queue.top();
    queue.pop();
    auto& left = symbols[top.pos];
    if (left.len == 0 || left.next < 0) continue;
    const int right_pos = left.next;
    auto& right = symbols[right_pos];
    // A stale entry: the pair at this position changed since it was queued.
    const auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.second != top.new_id) continue;
    left.id = top.new_id;
    left.len += right.len;
    left.next = right.next;
    right.len = 0;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
  for (const auto& s : symbols)
    if (s.len) out.push_back(s.id);
}

}  // namespace shardkit::text
