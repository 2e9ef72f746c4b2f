// Box arithmetic and ShardedState layouts: intersection, multi-chunk local tensors.
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>

#include "shardkit/sharded_state.hpp"

using shardkit::Box;

namespace {

// intersect(a, b) and intersect(b, a) agree; returns the first.
bool meet(const Box& a, const Box& b, Box& out) {
  Box other;
  const bool ab = shardkit::intersect(a, b, out), ba = shardkit::intersect(b, a, other);
  INFO("a at " << a.offsets[0] << " size " << a.sizes[0] << ", b at " << b.offsets[0] << " size " << b.sizes[0]);
  CHECK(ab == ba);
  if (ab && ba) CHECK(out == other);
  return ab;
}

}  // namespace

TEST_CASE("intersect is symmetric and an empty box overlaps nothing", "[state][box]") {
  Box out;
  // The case that was asymmetric: an empty box inside a non-empty one.
  CHECK_FALSE(meet(Box{{2}, {0}}, Box{{0}, {4}}, out));
  CHECK_FALSE(meet(Box{{0}, {0}}, Box{{0}, {0}}, out));
  // Touching boxes share no element.
  CHECK_FALSE(meet(Box{{0}, {2}}, Box{{2}, {2}}, out));
  CHECK_FALSE(meet(Box{{0}, {2}}, Box{{5}, {2}}, out));
  REQUIRE(meet(Box{{1}, {3}}, Box{{2}, {5}}, out));
  CHECK(out == Box{{2}, {2}});
  // Every pair of 1-D boxes in a small range: symmetric, and the size is the overlap count.
  for (std::int64_t ao = 0; ao < 5; ++ao)
    for (std::int64_t as = 0; as < 4; ++as)
      for (std::int64_t bo = 0; bo < 5; ++bo)
        for (std::int64_t bs = 0; bs < 4; ++bs) {
          std::int64_t common = 0;
          for (std::int64_t i = 0; i < 9; ++i) common += (i >= ao && i < ao + as && i >= bo && i < bo + bs);
          const bool overlap = meet(Box{{ao}, {as}}, Box{{bo}, {bs}}, out);
          CHECK(overlap == (common > 0));
          if (overlap) CHECK(out.numel() == common);
        }
}

TEST_CASE("intersect works per dimension; scalars and mismatched ranks", "[state][box]") {
  Box out;
  REQUIRE(shardkit::intersect(Box{{0, 2}, {4, 4}}, Box{{3, 0}, {5, 3}}, out));
  CHECK(out == Box{{3, 2}, {1, 1}});
  CHECK_FALSE(shardkit::intersect(Box{{0, 0}, {4, 2}}, Box{{0, 2}, {4, 2}}, out));  // disjoint in dim 1
  CHECK(shardkit::intersect(Box{{}, {}}, Box{{}, {}}, out));  // a scalar overlaps itself
  CHECK(out.numel() == 1);
  CHECK_FALSE(shardkit::intersect(Box{{0}, {4}}, Box{{0, 0}, {4, 1}}, out));
  CHECK(shardkit::full_box({3, 0}).numel() == 0);
}

TEST_CASE("Replicas say which copy a rank holds and refuse impossible ones", "[state][box]") {
  CHECK(shardkit::Replicas::none().saved_here());
  CHECK(shardkit::Replicas::none().count() == 1);
  CHECK(shardkit::Replicas::among(0, 4).saved_here());
  CHECK_FALSE(shardkit::Replicas::among(3, 4).saved_here());
  CHECK_THROWS_WITH(shardkit::Replicas::among(4, 4), Catch::Contains("must be in 0..3"));
  CHECK_THROWS(shardkit::Replicas::among(0, 0));
  CHECK_THROWS(shardkit::Replicas::among(-1, 2));
}

TEST_CASE("a local tensor cut into several chunks gives views of it", "[state][box]") {
  // A flat ZeRO-style range: elements 5..12 of a 4 x 4 tensor, i.e. the end of row 1, row 2
  // and the start of row 3, held as one local tensor of 8 elements.
  auto local = torch::arange(8, torch::kFloat);
  shardkit::ShardLayout layout;
  layout.global_shape = {4, 4};
  layout.chunks = {{Box{{1, 1}, {1, 3}}, 0}, {Box{{2, 0}, {1, 4}}, 3}, {Box{{3, 0}, {1, 1}}, 7}};
  shardkit::ShardedState state;
  state.add("model.w", local, layout, shardkit::Replicas::none());
  const auto& entry = state.tensors.at("model.w");
  REQUIRE(entry.chunks.size() == 3);
  CHECK(torch::equal(entry.chunks[1].data, torch::tensor({{3.f, 4.f, 5.f, 6.f}})));
  entry.chunks[2].data.fill_(-1);  // a view: writes land in the local tensor
  CHECK(local[7].item<float>() == -1);

  layout.chunks.push_back({Box{{3, 1}, {1, 2}}, 7});  // runs past the 8 local elements
  CHECK_THROWS_WITH(state.add("model.w", local, layout, shardkit::Replicas::none()), Catch::Contains("exceeds the local tensor"));
  CHECK_THROWS_WITH(state.add("model.t", torch::zeros({4, 4}).t(), shardkit::ShardLayout::whole({4, 4}), shardkit::Replicas::none()),
                    Catch::Contains("not contiguous"));
  CHECK(state.keys_with_prefix("model.") == std::vector<std::string>{"model.w"});
}
