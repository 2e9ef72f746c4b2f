// The `lerobot` dataset: a local LeRobot v3.0 dataset as shardkit batches, value for value as LeRobotDataset[i].
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <shardkit/augmentation.hpp>
#include <shardkit/capability.hpp>
#include <shardkit/dataset.hpp>
#include <shardkit/normalization.hpp>

#include "dataset_info.hpp"
#include "episode_table.hpp"
#include "frame_table.hpp"
#include "image_transforms.hpp"
#include "video_reader.hpp"

namespace shardkit::lerobot {

/// What the plugin's options say.
struct LeRobotOptions {
  std::string repo_id;      ///< <user>/<name> under $HF_LEROBOT_HOME (default "")
  std::string root;         ///< the dataset folder; wins over repo_id (default "")
  std::string episodes;     ///< "[0,2,5]"; "" = every episode
  double tolerance_s = 1e-4;  ///< how far a video frame's time may be from the one asked for
  std::int64_t num_workers = 0;  ///< threads decoding a batch; 0 = the calling thread
  bool use_imagenet_stats = true;  ///< cameras normalized with ImageNet's mean/std, as LeRobot's default
  ImageTransformsConfig image_transforms;  ///< LeRobot's camera augmentation (off by default)
};

class LeRobotDataset final : public WithCapabilities<Dataset, DatasetStatistics, AugmentedDataset> {
 public:
  explicit LeRobotDataset(const LeRobotOptions& options);

  std::int64_t size() const override { return frames_->num_rows(); }
  /// Every feature of info.json with its per-frame shape as LeRobot returns it: scalars [],
  /// vectors [n], cameras [channels, height, width].
  FeatureShapes features() const override;
  void set_delta_indices(const DeltaIndices& deltas) override;
  Batch get_batch(const std::vector<std::int64_t>& indices) const override;
  /// meta/stats.json (with ImageNet's mean/std for cameras when use_imagenet_stats).
  FeatureStats stats() const override { return stats_; }
  std::vector<std::string> cameras() const override;
  /// Whether --dataset.image_transforms.enable is on.
  bool augments() const override { return options_.image_transforms.enable; }
  /// get_batch with LeRobot's image transforms applied to each camera of each sample (all
  /// frames of a stacked camera alike), drawn from image_seed(seed, index, camera).
  Batch get_augmented_batch(const std::vector<std::int64_t>& indices, std::uint64_t seed) const override;

  const DatasetInfo& info() const { return info_; }
  const std::vector<std::int64_t>& episodes() const { return selected_; }
  const std::string& task(std::int64_t task_index) const { return tasks_.at(task_index); }

 private:
  /// One sample (LeRobotDataset.__getitem__), at row `row` of the frame table; its cameras
  /// augmented with randomness from `seed` when `augment`.
  Batch get_item(std::int64_t row, bool augment, std::uint64_t seed) const;
  /// The samples at `indices`, stacked, read on num_workers threads.
  Batch read_batch(const std::vector<std::int64_t>& indices, bool augment, std::uint64_t seed) const;
  /// The camera's frames at `rows` (rows of one episode), each float32 [C, H, W].
  std::vector<at::Tensor> camera_frames(const Feature& camera, const Episode& episode,
                                        const std::vector<std::int64_t>& rows) const;

  LeRobotOptions options_;
  DatasetInfo info_;
  std::map<std::int64_t, Episode> all_episodes_;
  std::vector<std::int64_t> selected_;
  std::map<std::int64_t, std::string> tasks_;
  std::unique_ptr<FrameTable> frames_;
  FeatureStats stats_;
  DeltaIndices deltas_;
  mutable VideoReaderPool videos_;
};

}  // namespace shardkit::lerobot
