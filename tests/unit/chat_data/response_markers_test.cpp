// The assistant's tokens found by response markers, on token ids (AITraining's add_completion_mask rule).
#include "response_markers.hpp"
#undef CHECK
#include <catch2/catch.hpp>

using shardkit::text::mark_responses;
using shardkit::text::ResponseMarkers;

namespace {

// Ids: 1 2 = the marker, 9 = "\n", 7 = end of turn, 5 = a user header.
ResponseMarkers markers(std::vector<std::uint32_t> end_turn = {7}) {
  ResponseMarkers m;
  m.marker_ids = {1, 2};
  m.newline_ids = {9};
  m.end_turn_ids = std::move(end_turn);
  return m;
}

std::vector<std::uint8_t> marked(const ResponseMarkers& m, const std::vector<std::uint32_t>& ids) {
  std::vector<std::uint8_t> trained;
  mark_responses(m, ids, trained);
  REQUIRE(trained.size() == ids.size());
  return trained;
}

}  // namespace

TEST_CASE("every answer is trained on from after its marker and newlines through its end of turn",
          "[chat_data][markers]") {
  //                          user     marker nl  answer  end nl  user  marker answer end
  const std::vector<std::uint32_t> ids = {5, 30, 7, 1, 2, 9, 9, 40, 41, 7, 9, 5, 31, 1, 2, 42, 7};
  CHECK(marked(markers(), ids) == std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1});
}

TEST_CASE("an answer whose turn never ends is trained on to the end; no marker trains on nothing",
          "[chat_data][markers]") {
  CHECK(marked(markers(), {5, 30, 1, 2, 40, 41}) == std::vector<std::uint8_t>{0, 0, 0, 0, 1, 1});
  CHECK(marked(markers({}), {1, 2, 40, 7, 5, 1, 2, 41}) == std::vector<std::uint8_t>{0, 0, 1, 1, 1, 1, 1, 1});
  CHECK(marked(markers(), {5, 30, 1, 40, 2, 7}) == std::vector<std::uint8_t>(6, 0));
  CHECK(marked(markers(), {}).empty());
}

TEST_CASE("an end of turn of several tokens is trained on whole", "[chat_data][markers]") {
  CHECK(marked(markers({7, 8}), {1, 2, 40, 7, 41, 7, 8, 5}) == std::vector<std::uint8_t>{0, 0, 1, 1, 1, 1, 1, 0});
}
