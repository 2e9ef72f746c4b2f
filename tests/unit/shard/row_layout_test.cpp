// The fsdp row layout: which rows of a parameter each rank holds, for every shard count up to
// past the row count (ranks holding nothing included), checked against torch.chunk.
#include <ATen/ATen.h>  // before Catch: LibTorch defines its own CHECK, which asserts nothing here

#include "../../../backends/sharding_engine/unit.hpp"

#include <catch2/catch.hpp>

using shardkit::shard::row_piece;

TEST_CASE("row pieces are torch.chunk's pieces for rows < N, rows = N and rows not divisible by N") {
  for (std::int64_t rows = 1; rows <= 40; ++rows) {
    for (std::int64_t n = 1; n <= 40; ++n) {
      INFO("rows " << rows << ", shards " << n);
      const auto chunks = at::arange(rows).chunk(n);
      std::int64_t next = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        INFO("rank " << k);
        const auto piece = row_piece(rows, n, k);
        if (k < static_cast<std::int64_t>(chunks.size())) {
          REQUIRE(piece.count == chunks[k].size(0));
          REQUIRE(piece.first == chunks[k][0].item<std::int64_t>());
        } else {
          REQUIRE(piece.count == 0);  // torch.chunk gives fewer pieces than ranks: this one holds nothing
          REQUIRE(piece.first == rows);
        }
        REQUIRE(piece.first == next);  // pieces follow each other in rank order
        next += piece.count;
        // The checkpoint layout of the piece: one box of its rows, or none when empty.
        const auto layout = shardkit::ShardLayout::rows({rows, 3}, piece.first, piece.count);
        REQUIRE(layout.chunks.size() == (piece.count > 0 ? 1u : 0u));
        if (piece.count > 0) {
          CHECK((layout.chunks[0].box.offsets == std::vector<std::int64_t>{piece.first, 0}));
          CHECK((layout.chunks[0].box.sizes == std::vector<std::int64_t>{piece.count, 3}));
        }
      }
      REQUIRE(next == rows);  // every row held exactly once
    }
  }
}

TEST_CASE("a 0-dim parameter is one row: rank 0 holds it, every other rank nothing") {
  const auto first = row_piece(1, 8, 0);
  CHECK(first.first == 0);
  CHECK(first.count == 1);
  for (std::int64_t k = 1; k < 8; ++k) {
    const auto piece = row_piece(1, 8, k);
    CHECK(piece.count == 0);
    CHECK(shardkit::ShardLayout::rows({}, piece.first, piece.count).chunks.empty());
  }
}
