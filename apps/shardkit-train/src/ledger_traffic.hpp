// The collective ledger's byte accounting: what each collective of this rank moves over its
// links, counted per process group kind, collective kind and issuer, under the ring algorithms
// that NCCL and Gloo use for large messages. With S the bytes of the whole tensor (the gathered
// output of an all-gather, the input of a reduce-scatter) on a group of N ranks, a rank sends
// and receives: all_reduce 2(N-1)/N x S, all_gather and reduce_scatter (N-1)/N x S, broadcast S;
// nothing on a group of one. Barriers and the byte gathers of start-up count as calls only.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shardkit::ledger {

/// Bytes one rank sends (as many as it receives) for the collective `op` on `payload` bytes
/// (S above) in a group of `group_size` ranks.
double ring_bytes(const std::string& op, std::int64_t payload, int group_size);

struct TrafficKey {
  std::string group;   ///< the group's kind: its name up to '/' ("world", "dp_shard", "dp_replicate")
  std::string op;      ///< "all_reduce", "all_gather", "reduce_scatter", "broadcast", ...
  std::string source;  ///< who issued it: its scope up to the first ',' ("fsdp", "trainer", "ledger check")
  bool operator<(const TrafficKey& o) const;
};

struct TrafficCount {
  std::int64_t calls = 0;
  std::int64_t payload_bytes = 0;  ///< sum of S
  double sent_bytes = 0;           ///< sum of ring_bytes (as many received)
  std::int64_t padding_bytes = 0;  ///< of payload_bytes, padding (CollectivePadding)
  double padding_sent_bytes = 0;   ///< of sent_bytes, padding
  int group_size = 0;              ///< N (the same for every group of one kind)
};

using Traffic = std::map<TrafficKey, TrafficCount>;

/// Adds `b` into `a`.
void add_traffic(Traffic& a, const Traffic& b);

/// metrics.jsonl's names for one update's traffic: comm/bytes_sent, comm/bytes_received,
/// comm/calls and comm/padding_bytes_sent (everything, padding included),
/// comm/<group>/<op>/{bytes_sent,calls} and comm/<source>/bytes_sent (a source's spaces as '_').
std::map<std::string, double> traffic_metrics(const Traffic& traffic);

/// The end-of-run summary: one line per group, kind and source, the mean per update over
/// `updates` updates, the total, then what start-up (before the first step) moved.
std::string traffic_summary(const Traffic& total, std::int64_t updates, const Traffic& startup = {});

}  // namespace shardkit::ledger
