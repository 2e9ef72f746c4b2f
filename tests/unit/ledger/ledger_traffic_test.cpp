// The collective ledger's byte accounting: the ring algorithms' bytes per collective, the names
// metrics.jsonl gets, and a ledger that counts what a (one-rank) group's collectives carry.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK (pulled in by LibTorch) would shadow Catch2's
#include <catch2/catch.hpp>

#include "../../../apps/shardkit-train/src/ledger.hpp"
#include "shardkit/ledger.hpp"

using namespace shardkit::ledger;

TEST_CASE("ring bytes: all-reduce 2(N-1)/N S, all-gather and reduce-scatter (N-1)/N S, broadcast S, none alone") {
  CHECK(ring_bytes("all_reduce", 1024, 4) == 1536);
  CHECK(ring_bytes("all_gather", 1024, 4) == 768);
  CHECK(ring_bytes("reduce_scatter", 1024, 8) == 896);
  CHECK(ring_bytes("broadcast", 1024, 8) == 1024);
  CHECK(ring_bytes("all_reduce", 1024, 1) == 0);
  CHECK(ring_bytes("barrier", 0, 8) == 0);
  CHECK(ring_bytes("all_reduce", 1000, 3) == Approx(2000.0 * 2 / 3));
}

TEST_CASE("traffic metrics sum every group, kind and issuer, padding apart") {
  Traffic t;
  t[{"dp_shard", "all_gather", "fsdp"}] = {4, 4096, 3072, 64, 48, 4};
  t[{"dp_shard", "reduce_scatter", "fsdp"}] = {2, 2048, 1536, 0, 0, 4};
  t[{"world", "all_reduce", "ledger check"}] = {1, 48, 72, 0, 0, 4};
  const auto m = traffic_metrics(t);
  CHECK(m.at("comm/bytes_sent") == 3072 + 1536 + 72);
  CHECK(m.at("comm/bytes_received") == m.at("comm/bytes_sent"));
  CHECK(m.at("comm/calls") == 7);
  CHECK(m.at("comm/padding_bytes_sent") == 48);
  CHECK(m.at("comm/dp_shard/all_gather/bytes_sent") == 3072);
  CHECK(m.at("comm/dp_shard/all_gather/calls") == 4);
  CHECK(m.at("comm/fsdp/bytes_sent") == 3072 + 1536);
  CHECK(m.at("comm/ledger_check/bytes_sent") == 72);
  const auto text = traffic_summary(t, 2);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("dp_shard (4 ranks) all_gather from fsdp: 2.0 calls, 2.0 KiB of tensors, "
                                   "1.5 KiB sent (24 B of it padding)"));
  CHECK_THAT(text, Catch::Contains("total: 2.3 KiB sent per update, 24 B of it padding"));
  CHECK_THAT(traffic_summary(t, 2, {{{"world", "broadcast", "fsdp"}, {3, 900, 900, 0, 0, 4}}}),
             Catch::Contains("start-up, before the first step (not in the above): 3 calls, 900 B sent"));
}

TEST_CASE("the ledger counts each update's collectives, their bytes and padding, until end_step") {
  auto ledger = std::make_shared<Ledger>(nullptr, 0, 1, "fsdp", Options{});
  auto group = ledger->wrap(shardkit::make_local_group("world"));
  auto t = torch::zeros({256});
  ledger->begin_step(1);
  {
    shardkit::CollectiveScope scope("fsdp, unit blocks.1");
    shardkit::CollectivePadding padded(16);
    group->all_reduce(t, shardkit::ReduceOp::Sum);
    group->all_reduce(t, shardkit::ReduceOp::Sum);
  }
  CHECK(ledger->last_update_traffic().empty());  // the update has not ended
  ledger->end_step(1, *group);
  const auto traffic = ledger->last_update_traffic();
  REQUIRE(traffic.size() == 1);
  const auto& [key, count] = *traffic.begin();
  CHECK(key.group == "world");
  CHECK(key.op == "all_reduce");
  CHECK(key.source == "fsdp");
  CHECK(count.calls == 2);
  CHECK(count.payload_bytes == 2 * 1024);
  CHECK(count.padding_bytes == 32);
  CHECK(count.sent_bytes == 0);  // a group of one sends nothing
  CHECK_THAT(ledger->traffic_summary_text(), Catch::Contains("world (1 ranks) all_reduce from fsdp: 2.0 calls"));
  ledger->begin_step(2);
  ledger->end_step(2, *group);
  CHECK(ledger->last_update_traffic().empty());
}
