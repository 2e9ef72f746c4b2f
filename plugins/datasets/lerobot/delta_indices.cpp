// Frame queries for delta indices: clamp to the episode, flag what was clamped (LeRobot's _is_pad).
#include "delta_indices.hpp"

#include <algorithm>

namespace shardkit::lerobot {

FrameQuery query_frames(std::int64_t index, const std::vector<std::int64_t>& deltas, std::int64_t episode_from,
                        std::int64_t episode_to) {
  FrameQuery q;
  for (const auto d : deltas) {
    const auto wanted = index + d;
    q.indices.push_back(std::clamp(wanted, episode_from, episode_to - 1));
    q.is_pad.push_back(wanted < episode_from || wanted >= episode_to);
  }
  return q;
}

}  // namespace shardkit::lerobot
