// What the collective ledger records per collective and what a rank publishes of it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardkit::ledger {

/// One collective as this rank issued it.
struct Entry {
  std::string group;                ///< the group's name: "world", "dp_shard/1"
  std::uint64_t seq = 0;            ///< position in this group's sequence on this rank (1-based)
  std::string op;                   ///< "all_gather", "all_reduce", ...
  std::vector<std::int64_t> shape;  ///< the tensor's shape (empty for barrier and byte gathers)
  std::string dtype;                ///< "float32" ("" without a tensor)
  std::string scope;                ///< who issued it: "fsdp, unit blocks.1"
  std::int64_t step = 0;            ///< the training step being computed (1-based; 0 = start-up)
  std::uint64_t signature = 0;      ///< signature_of(...): equal on every rank for the same call
  double issued_at = 0;             ///< seconds since the Unix epoch
  bool done = false;                ///< its wait() returned

  /// "all_gather #12 on 'world' [256] float32 (fsdp, unit blocks.1, step 3)".
  std::string text() const;
};

/// A group's kind: its name up to '/' ("dp_shard/1" -> "dp_shard"), which every member of the
/// kind's groups shares.
std::string group_kind(const std::string& group);

/// Hash of what must agree across the members of a group: the operation, the group's kind
/// (its name up to '/', so that dp_shard/0 and dp_shard/1 compare), shape, dtype and scope.
std::uint64_t signature_of(const std::string& op, const std::string& group,
                           const std::vector<std::int64_t>& shape, const std::string& dtype,
                           const std::string& scope);

/// Folds `signature` into a running hash of a sequence.
std::uint64_t mix(std::uint64_t hash, std::uint64_t signature);

/// What one rank published through the store.
struct Snapshot {
  int rank = -1;
  double published_at = 0;                       ///< seconds since the Unix epoch
  std::int64_t step = 0;                         ///< the step it was computing
  std::map<std::string, std::uint64_t> issued;   ///< group -> sequence number of its last collective
  /// The collective its main thread is blocked in (seq 0 = none) and since when.
  std::string waiting_group;
  std::uint64_t waiting_seq = 0;
  double waiting_since = 0;
  std::vector<Entry> entries;                    ///< its last collectives, oldest first

  /// The entry with this group and sequence number, or nullptr.
  const Entry* find(const std::string& group, std::uint64_t seq) const;
};

std::string to_json(const Snapshot& snapshot);
/// Throws FormatError on text that is not a snapshot.
Snapshot snapshot_from_json(const std::string& text);
std::string to_json(const std::vector<Entry>& entries);
std::vector<Entry> entries_from_json(const std::string& text);

/// Seconds since the Unix epoch (comparable between the processes of one machine, and between
/// machines as far as their clocks agree).
double wall_seconds();

}  // namespace shardkit::ledger
