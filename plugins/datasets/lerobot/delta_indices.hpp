// Which frames a sample reads for each feature with delta indices, clamped to its episode as LeRobot does.
#pragma once

#include <cstdint>
#include <vector>

namespace shardkit::lerobot {

/// The global frame indices to read and which of them are padding.
struct FrameQuery {
  std::vector<std::int64_t> indices;  ///< clamped into [episode_from, episode_to)
  std::vector<bool> is_pad;           ///< true where index + delta fell outside the episode
};

/// Frames `index + d` for each `d` in `deltas`, clamped to the episode's first/last frame
/// ([episode_from, episode_to) in global indices) and flagged as padding when clamped.
FrameQuery query_frames(std::int64_t index, const std::vector<std::int64_t>& deltas, std::int64_t episode_from,
                        std::int64_t episode_to);

}  // namespace shardkit::lerobot
