// The collective ledger's reports: a collective that did not complete, and ranks that diverged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ledger_entry.hpp"

namespace shardkit::ledger {

/// Two entries at the same position of two ranks' sequences that are different calls.
struct Difference {
  Entry mine, theirs;
};

/// The earliest of `mine` (in issue order) whose group and sequence number `theirs` also has
/// with another signature: two ranks paired different calls in one collective.
std::optional<Difference> first_difference(const std::vector<Entry>& mine, const std::vector<Entry>& theirs);

/// Two ranks' complete lists of one step's collectives compared position by position (group
/// kinds, not names, so that members of different subgroups compare): the first position that
/// differs, where a missing entry is an op "(nothing: the step ended)".
std::optional<Difference> first_difference_in_order(const std::vector<Entry>& mine,
                                                     const std::vector<Entry>& theirs);

/// "ranks diverged at step 3: rank 1 issued all_gather #12 on 'world' ... where rank 0 issued
/// all_gather #12 on 'world' ...", with what to check.
std::string divergence_report(int rank_a, const Entry& a, int rank_b, const Entry& b);

/// For `failed`, a collective of this rank that did not complete (timeout, lost peer): which
/// ranks had not reached its sequence number, what each last issued or is waiting in, any pair
/// of ranks that diverged, and this rank's last collectives. `peers` holds what the other ranks
/// published (ranks without a record are named as such); `now` is wall_seconds().
std::string stall_report(const Entry& failed, const Snapshot& mine, const std::vector<Snapshot>& peers,
                         int world_size, double now);

/// This rank's last collectives, one per line, each indented by `indent`.
std::string recent_lines(const Snapshot& mine, double now, const std::string& indent = "    ");

}  // namespace shardkit::ledger
