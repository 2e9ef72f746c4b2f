// "Did you mean" support: Levenshtein distance and the closest known names to a mistyped one.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "config_internal.hpp"
#include "shardkit/config_resolution.hpp"

namespace shardkit {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the classic dynamic programme: row[j] = distance(a[0..i), b[0..j)).
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

// Whether `a` becomes `b` by swapping two neighbouring characters ("mpl" and "mlp"), the
// commonest typo, which Levenshtein counts as two edits.
bool one_swap_apart(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  std::size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] &&
         a.compare(i + 2, std::string::npos, b, i + 2, std::string::npos) == 0;
}

}  // namespace

std::vector<std::string> closest_names(const std::string& key, const std::vector<std::string>& known,
                                       std::size_t limit) {
  // Close enough to be a typo: a third of the key's length, at least 2 edits, at most 4; a
  // word of 3 characters or fewer only 1 edit (or one swap), else "foo" would suggest "good".
  const std::size_t threshold = key.size() <= 3 ? 1 : std::clamp<std::size_t>(key.size() / 3, 2, 4);
  struct Candidate {
    std::size_t distance;
    std::string key;
  };
  std::vector<Candidate> candidates;
  for (const auto& k : known) {
    std::size_t d = one_swap_apart(key, k) ? 1 : edit_distance(key, k);
    // "--lr" for "--optimizer.lr": the given key is the last part of a known one.
    const bool suffix = k.size() > key.size() + 1 &&
                        k.compare(k.size() - key.size(), key.size(), key) == 0 &&
                        k[k.size() - key.size() - 1] == '.';
    if (suffix) d = std::min(d, threshold);
    if (d <= threshold) candidates.push_back({d, k});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.distance < y.distance; });
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    if (out.size() == limit) break;
    if (std::find(out.begin(), out.end(), c.key) == out.end()) out.push_back(c.key);
  }
  return out;
}

namespace config_detail {

std::string describe_origin(const std::string& origin) {
  return origin.rfind("--", 0) == 0 ? "command line" : origin;
}

std::pair<std::size_t, std::size_t> line_column(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

}  // namespace config_detail
}  // namespace shardkit
