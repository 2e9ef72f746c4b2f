// The collective ledger's records and reports, on hand-made records of two ranks.
#include <catch2/catch.hpp>

#include "../../../apps/shardkit-train/src/ledger_entry.hpp"
#include "../../../apps/shardkit-train/src/ledger_reports.hpp"

using namespace shardkit::ledger;

namespace {

Entry entry(const std::string& group, std::uint64_t seq, const std::string& op, std::vector<std::int64_t> shape,
            const std::string& scope, std::int64_t step = 3) {
  Entry e;
  e.group = group;
  e.seq = seq;
  e.op = op;
  e.shape = std::move(shape);
  e.dtype = "float32";
  e.scope = scope;
  e.step = step;
  e.signature = signature_of(e.op, e.group, e.shape, e.dtype, e.scope);
  e.issued_at = 1000.0 + static_cast<double>(seq);
  e.done = true;
  return e;
}

}  // namespace

TEST_CASE("ledger signatures tell calls apart by op, shape, dtype and scope, and subgroups by kind only") {
  const auto base = signature_of("all_gather", "world", {256}, "float32", "fsdp, unit blocks.0");
  CHECK(base == signature_of("all_gather", "world", {256}, "float32", "fsdp, unit blocks.0"));
  CHECK(base != signature_of("all_gather", "world", {256}, "float32", "fsdp, unit blocks.1"));
  CHECK(base != signature_of("all_reduce", "world", {256}, "float32", "fsdp, unit blocks.0"));
  CHECK(base != signature_of("all_gather", "world", {255}, "float32", "fsdp, unit blocks.0"));
  CHECK(base != signature_of("all_gather", "world", {256}, "bfloat16", "fsdp, unit blocks.0"));
  CHECK(signature_of("all_gather", "dp_shard/0", {8}, "float32", "x") ==
        signature_of("all_gather", "dp_shard/1", {8}, "float32", "x"));
  CHECK(signature_of("all_gather", "dp_shard/0", {8}, "float32", "x") !=
        signature_of("all_gather", "dp_replicate/0", {8}, "float32", "x"));
  // The running hash depends on the order.
  CHECK(mix(mix(0, 1), 2) != mix(mix(0, 2), 1));
}

TEST_CASE("ledger snapshots survive their JSON form") {
  Snapshot s;
  s.rank = 1;
  s.published_at = 1234.5;
  s.step = 7;
  s.issued = {{"world", 12}, {"dp_shard/0", 3}};
  s.waiting_group = "world";
  s.waiting_seq = 12;
  s.waiting_since = 1230.25;
  s.entries = {entry("world", 11, "all_reduce", {6}, "ledger check"), entry("world", 12, "all_gather", {2, 128}, "fsdp, unit a")};
  s.entries.back().signature = 0xfedcba9876543210ULL;  // all 64 bits survive
  const auto back = snapshot_from_json(to_json(s));
  CHECK(back.rank == 1);
  CHECK(back.step == 7);
  CHECK(back.issued == s.issued);
  CHECK(back.waiting_seq == 12);
  CHECK(back.waiting_since == 1230.25);
  REQUIRE(back.entries.size() == 2);
  CHECK(back.entries[1].signature == 0xfedcba9876543210ULL);
  CHECK(back.entries[1].text() == s.entries[1].text());
  CHECK(s.entries[1].text() == "all_gather #12 on 'world' [2, 128] float32 (fsdp, unit a, step 3)");
  CHECK_THROWS_WITH(snapshot_from_json("{\"rank\": 1}"), Catch::Contains("collective ledger record without"));
  CHECK_THROWS_WITH(snapshot_from_json("not json"), Catch::Contains("unreadable collective ledger record"));
}

TEST_CASE("the first difference between two ranks is the earliest same-position pair of different calls") {
  const std::vector<Entry> rank0 = {entry("world", 1, "all_gather", {256}, "fsdp, unit blocks.0"),
                                    entry("world", 2, "all_gather", {256}, "fsdp, unit blocks.1"),
                                    entry("world", 3, "reduce_scatter", {512}, "fsdp, unit blocks.1")};
  const std::vector<Entry> rank1 = {entry("world", 1, "all_gather", {256}, "fsdp, unit blocks.0"),
                                    entry("world", 2, "all_gather", {256}, "fsdp, unit blocks.0"),
                                    entry("world", 3, "all_gather", {256}, "fsdp, unit blocks.1")};
  const auto d = first_difference(rank1, rank0);
  REQUIRE(d);
  CHECK(d->mine.seq == 2);
  CHECK(d->mine.scope == "fsdp, unit blocks.0");
  CHECK(d->theirs.scope == "fsdp, unit blocks.1");
  CHECK_FALSE(first_difference(rank0, rank0));
  // Same positions on different groups do not pair.
  CHECK_FALSE(first_difference({entry("dp_shard/0", 2, "all_gather", {1}, "a")}, {entry("dp_shard/1", 2, "barrier", {}, "b")}));

  const auto report = divergence_report(1, d->mine, 0, d->theirs);
  CHECK(report == "ranks diverged at step 3: rank 1 issued all_gather #2 on 'world' [256] float32 (fsdp, unit blocks.0, "
                  "step 3) where rank 0 issued all_gather #2 on 'world' [256] float32 (fsdp, unit blocks.1, step 3). "
                  "Every rank must issue the same collectives in the same order: look for a module called a different "
                  "number of times, or a branch that depends on the data, on one of these ranks");
}

TEST_CASE("a step's lists compare by position, and a shorter list ends the step") {
  const std::vector<Entry> a = {entry("dp_shard/0", 1, "all_gather", {8}, "u"), entry("world", 1, "all_reduce", {6}, "c")};
  const std::vector<Entry> b = {entry("dp_shard/1", 1, "all_gather", {8}, "u"), entry("world", 1, "all_reduce", {6}, "c")};
  CHECK_FALSE(first_difference_in_order(a, b));
  const std::vector<Entry> longer = {a[0], a[1], entry("world", 2, "all_gather", {8}, "extra")};
  const auto d = first_difference_in_order(longer, a);
  REQUIRE(d);
  CHECK(d->mine.scope == "extra");
  CHECK(d->theirs.op == "(nothing: the step ended)");
  CHECK(divergence_report(1, d->mine, 0, d->theirs).find("where rank 0 issued (nothing: the step ended)") !=
        std::string::npos);
}

TEST_CASE("a stall report names the ranks behind, what each was doing, and this rank's last calls") {
  Snapshot mine;
  mine.rank = 0;
  mine.issued = {{"world", 5}};
  mine.entries = {entry("world", 4, "all_reduce", {10}, "ddp, bucket 0", 2), entry("world", 5, "all_reduce", {10}, "ddp, bucket 0")};
  mine.entries.back().done = false;
  Snapshot busy;  // issued #4 and went on computing
  busy.rank = 1;
  busy.published_at = 1010.0;
  busy.issued = {{"world", 4}};
  busy.entries = {mine.entries.front()};
  Snapshot waiting;  // reached #5 and waits in it
  waiting.rank = 2;
  waiting.published_at = 1010.0;
  waiting.issued = {{"world", 5}};
  waiting.entries = mine.entries;
  waiting.waiting_group = "world";
  waiting.waiting_seq = 5;
  waiting.waiting_since = 1006.0;
  const auto report = stall_report(mine.entries.back(), mine, {busy, waiting}, 4, 1011.0);
  INFO(report);
  CHECK(report.rfind("collective ledger of rank 0: all_reduce #5 on 'world' [10] float32 (ddp, bucket 0, step 3) did "
                     "not complete.\n", 0) == 0);
  CHECK(report.find("ranks that have not reached #5 on 'world': 1\n") != std::string::npos);
  CHECK(report.find("rank 1: last issued all_reduce #4 on 'world' [10] float32 (ddp, bucket 0, step 2), 7.0 s ago; "
                    "not in a collective since: busy in computation or I/O (as it published 1.0 s ago)") != std::string::npos);
  CHECK(report.find("rank 2: waiting in all_reduce #5 on 'world' [10] float32 (ddp, bucket 0, step 3) for 5.0 s") !=
        std::string::npos);
  CHECK(report.find("no ledger record from rank(s) 3") != std::string::npos);
  CHECK(report.find("this rank's last collectives:\n    all_reduce #4") != std::string::npos);
  CHECK(report.find("6.0 s ago, not completed") != std::string::npos);
  CHECK(report.find("diverged") == std::string::npos);
}
