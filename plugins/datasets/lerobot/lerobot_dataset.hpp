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
  std::string exclude_episodes;  ///< "[1,3]": dropped from `episodes` (default "")
  double eval_split = 0;         ///< fraction of each task's episodes held out for evaluation
  bool validation = false;       ///< read the held-out episodes (--dataset.split=validation)
  std::int64_t max_eval_samples = 0;  ///< validation: at most this many frames, spread over tasks (0 = all)
  double tolerance_s = 1e-4;  ///< how far a video frame's time may be from the one asked for
  std::int64_t num_workers = 0;  ///< threads decoding a batch; 0 = the calling thread
  bool use_imagenet_stats = true;  ///< cameras normalized with ImageNet's mean/std, as LeRobot's default
  ImageTransformsConfig image_transforms;  ///< LeRobot's camera augmentation (off by default)
};

class LeRobotDataset final : public WithCapabilities<Dataset, DatasetStatistics, AugmentedDataset> {
 public:
  explicit LeRobotDataset(const LeRobotOptions& options);

  std::int64_t size() const override {
    return rows_.empty() ? frames_->num_rows() : static_cast<std::int64_t>(rows_.size());
  }
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
  /// The episodes read (this split's), in index order.
  const std::vector<std::int64_t>& episodes() const { return selected_; }
  /// The episodes --dataset.eval_split holds out (empty without one), in index order.
  const std::vector<std::int64_t>& held_out() const { return held_out_; }
  /// Episode selections that were dropped, to tell the user (LeRobot warns of them too).
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& task(std::int64_t task_index) const { return tasks_.at(task_index); }

 private:
  /// The frame-table row of sample `index`.
  std::int64_t row_of(std::int64_t index) const { return rows_.empty() ? index : rows_[static_cast<std::size_t>(index)]; }
  /// The rows --max_eval_samples keeps of the validation split.
  std::vector<std::int64_t> capped_rows(std::int64_t max_samples) const;
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
  std::vector<std::int64_t> held_out_;
  std::vector<std::string> warnings_;
  std::vector<std::int64_t> rows_;  ///< sample -> frame-table row under --max_eval_samples; empty = identity
  std::map<std::int64_t, std::string> tasks_;
  std::unique_ptr<FrameTable> frames_;
  FeatureStats stats_;
  DeltaIndices deltas_;
  mutable VideoReaderPool videos_;
};

}  // namespace shardkit::lerobot
