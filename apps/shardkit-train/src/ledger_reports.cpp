// The collective ledger's reports, built from what the ranks published.
#include "ledger_reports.hpp"

#include <cstdio>

namespace shardkit::ledger {
namespace {

std::string ago(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds < 0 ? 0.0 : seconds);
  return text;
}

std::string rank_name(int rank) { return "rank " + std::to_string(rank); }

/// One line on what `peer` was doing when it last published.
std::string peer_line(const Snapshot& peer, double now) {
  std::string line = rank_name(peer.rank) + ": ";
  if (peer.waiting_seq > 0) {
    const Entry* e = peer.find(peer.waiting_group, peer.waiting_seq);
    line += "waiting in " + (e ? e->text() : "#" + std::to_string(peer.waiting_seq) + " on '" + peer.waiting_group + "'") +
            " for " + ago(now - peer.waiting_since);
  } else if (!peer.entries.empty()) {
    const auto& last = peer.entries.back();
    line += "last issued " + last.text() + ", " + ago(now - last.issued_at) +
            " ago; not in a collective since: busy in computation or I/O";
  } else {
    line += "issued no collective yet";
  }
  return line + " (as it published " + ago(now - peer.published_at) + " ago)";
}

}  // namespace

std::optional<Difference> first_difference(const std::vector<Entry>& mine, const std::vector<Entry>& theirs) {
  for (const auto& a : mine)
    for (const auto& b : theirs)
      if (a.seq == b.seq && a.group == b.group && a.signature != b.signature) return Difference{a, b};
  return std::nullopt;
}

std::optional<Difference> first_difference_in_order(const std::vector<Entry>& mine,
                                                     const std::vector<Entry>& theirs) {
  const auto n = std::max(mine.size(), theirs.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i < mine.size() && i < theirs.size() && mine[i].signature == theirs[i].signature &&
        group_kind(mine[i].group) == group_kind(theirs[i].group))
      continue;
    Entry ended;
    ended.op = "(nothing: the step ended)";
    const auto& other = i < mine.size() ? mine[i] : theirs[i];
    ended.group = other.group;
    ended.seq = other.seq;
    ended.step = other.step;
    return Difference{i < mine.size() ? mine[i] : ended, i < theirs.size() ? theirs[i] : ended};
  }
  return std::nullopt;
}

std::string divergence_report(int rank_a, const Entry& a, int rank_b, const Entry& b) {
  const auto step = std::max(a.step, b.step);
  const auto text = [](const Entry& e) { return e.signature == 0 && e.dtype.empty() && e.scope.empty() ? e.op : e.text(); };
  return "ranks diverged at step " + std::to_string(step) + ": " + rank_name(rank_a) + " issued " + text(a) +
         " where " + rank_name(rank_b) + " issued " + text(b) +
         ". Every rank must issue the same collectives in the same order: look for a module called a "
         "different number of times, or a branch that depends on the data, on one of these ranks";
}

std::string recent_lines(const Snapshot& mine, double now, const std::string& indent) {
  std::string lines;
  for (const auto& e : mine.entries)
    lines += indent + e.text() + ", " + ago(now - e.issued_at) + " ago" + (e.done ? "" : ", not completed") + "\n";
  return lines.empty() ? indent + "(none)\n" : lines;
}

std::string stall_report(const Entry& failed, const Snapshot& mine, const std::vector<Snapshot>& peers,
                         int world_size, double now) {
  std::string report = "collective ledger of rank " + std::to_string(mine.rank) + ": " + failed.text() +
                       " did not complete.\n";
  std::vector<int> behind, silent;
  std::string lines;
  std::optional<std::string> diverged;
  std::vector<bool> heard(static_cast<std::size_t>(world_size), false);
  heard[static_cast<std::size_t>(mine.rank)] = true;
  for (const auto& peer : peers) {
    if (peer.rank < 0 || peer.rank >= world_size || peer.rank == mine.rank) continue;
    heard[static_cast<std::size_t>(peer.rank)] = true;
    const auto it = peer.issued.find(failed.group);
    if (it == peer.issued.end()) continue;  // not a member of the group
    if (it->second < failed.seq) behind.push_back(peer.rank);
    lines += "  " + peer_line(peer, now) + "\n";
    if (!diverged)
      if (const auto d = first_difference(mine.entries, peer.entries))
        diverged = divergence_report(peer.rank, d->theirs, mine.rank, d->mine);
  }
  for (int r = 0; r < world_size; ++r)
    if (!heard[static_cast<std::size_t>(r)]) silent.push_back(r);
  const auto list = [](const std::vector<int>& ranks) {
    std::string text;
    for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
    return text;
  };
  if (!behind.empty())
    report += "  ranks that have not reached #" + std::to_string(failed.seq) + " on '" + failed.group +
              "': " + list(behind) + "\n";
  if (diverged) report += "  " + *diverged + "\n";
  report += lines;
  if (!silent.empty())
    report += "  no ledger record from rank(s) " + list(silent) +
              " (they exited before publishing one, or the store is unreachable)\n";
  report += "  this rank's last collectives:\n" + recent_lines(mine, now);
  return report;
}

}  // namespace shardkit::ledger
