// LeRobotDataset.__getitem__ in C++: columns from parquet, cameras decoded, delta frames with _is_pad.
#include "lerobot_dataset.hpp"

#include <algorithm>
#include <exception>
#include <thread>

#include <shardkit/error.hpp>

#include "dataset_location.hpp"
#include "delta_indices.hpp"
#include "png_decoder.hpp"
#include "stats_file.hpp"
#include "task_table.hpp"

namespace shardkit::lerobot {

LeRobotDataset::LeRobotDataset(const LeRobotOptions& options) : options_(options) {
  const auto root = locate_dataset(options.repo_id, options.root);
  info_ = read_dataset_info(root);
  tasks_ = read_tasks(root);
  all_episodes_ = read_episodes(info_);
  const auto base = select_episodes(options.episodes, options.exclude_episodes, all_episodes_, root, warnings_);
  auto split = split_episodes(base, all_episodes_, options.eval_split);
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.eval.begin(), split.eval.end());
  held_out_ = split.eval;
  selected_ = options.validation ? split.eval : split.train;
  if (options.validation && selected_.empty())
    throw ConfigError("--dataset.split=validation reads the episodes --dataset.eval_split holds out, and it is " +
                      std::to_string(options.eval_split) + "; set --dataset.eval_split to a fraction in (0, 1)");
  frames_ = std::make_unique<FrameTable>(info_, all_episodes_, selected_);
  if (options.validation && options.max_eval_samples > 0) rows_ = capped_rows(options.max_eval_samples);
  stats_ = read_stats(root);
  if (options.use_imagenet_stats) use_imagenet_stats(stats_, cameras());
}

std::vector<std::int64_t> LeRobotDataset::capped_rows(std::int64_t max_samples) const {
  // LeRobot main's --max_eval_samples: max(1, max // tasks) frames of each task (tasks in
  // index order), each task's first frames in dataset order.
  const auto task_of = frames_->column("task_index").to(at::kLong).contiguous();
  const auto* task_index = task_of.data_ptr<std::int64_t>();
  std::map<std::int64_t, std::vector<std::int64_t>> by_task;
  for (std::int64_t row = 0; row < frames_->num_rows(); ++row) by_task[task_index[row]].push_back(row);
  const auto per_task = std::max<std::int64_t>(1, max_samples / static_cast<std::int64_t>(by_task.size()));
  std::vector<std::int64_t> rows;
  for (const auto& [task, members] : by_task)
    rows.insert(rows.end(), members.begin(),
                members.begin() + std::min<std::int64_t>(per_task, static_cast<std::int64_t>(members.size())));
  return rows;
}

std::vector<std::string> LeRobotDataset::cameras() const {
  std::vector<std::string> names;
  for (const auto* camera : info_.cameras()) names.push_back(camera->name);
  return names;
}

FeatureShapes LeRobotDataset::features() const {
  FeatureShapes shapes;
  for (const auto& f : info_.features) shapes[f.name] = f.sample_shape();
  return shapes;
}

void LeRobotDataset::set_delta_indices(const DeltaIndices& deltas) {
  for (const auto& [name, offsets] : deltas) {
    if (!info_.find(name)) {
      std::string have;
      for (const auto& f : info_.features) have += (have.empty() ? "" : ", ") + f.name;
      throw ConfigError("the policy needs feature '" + name + "', which the LeRobot dataset in " + info_.root +
                        " lacks (it has: " + have + "); train on a dataset recorded with it");
    }
    if (offsets.empty()) throw ConfigError("the delta indices of feature '" + name + "' are an empty list");
  }
  deltas_ = deltas;
}

std::vector<at::Tensor> LeRobotDataset::camera_frames(const Feature& camera, const Episode& episode,
                                                      const std::vector<std::int64_t>& rows) const {
  const auto shape = camera.sample_shape();
  const auto frame_index = frames_->column("frame_index");
  std::vector<at::Tensor> out;
  if (camera.storage == Storage::Image) {
    for (const auto row : rows)
      out.push_back(to_chw_float(decode_image(
          frames_->image_bytes(camera.name, row), shape[1], shape[2],
          "the image of camera '" + camera.name + "' in episode " + std::to_string(episode.index) + ", frame " +
              std::to_string(frame_index[row].item<std::int64_t>()) + " (" +
              info_.data_file(episode.data_chunk, episode.data_file) + ")")));
    return out;
  }
  const auto span_it = episode.videos.find(camera.name);
  if (span_it == episode.videos.end())
    throw FormatError("the episodes table of " + info_.root + " gives no video file for camera '" + camera.name +
                      "' in episode " + std::to_string(episode.index));
  const auto& span = span_it->second;
  const auto path = info_.video_file(camera.name, span.chunk, span.file);
  const auto timestamps = frames_->column("timestamp");
  auto reader = videos_.take(path);
  for (const auto row : rows) {
    // LeRobot adds the row's float32 timestamp, widened, to the episode's float64 start in the file.
    const double time = span.from_timestamp + static_cast<double>(timestamps[row].item<float>());
    out.push_back(to_chw_float(reader->frame_at(
        time, options_.tolerance_s, shape[1], shape[2],
        "episode " + std::to_string(episode.index) + ", frame " +
            std::to_string(frame_index[row].item<std::int64_t>()) + " of camera '" + camera.name + "'")));
  }
  videos_.give_back(path, std::move(reader));
  return out;
}

Batch LeRobotDataset::get_item(std::int64_t row, bool augment, std::uint64_t seed) const {
  Batch item;
  for (const auto& [name, column] : frames_->columns()) item[name] = column[row];
  const auto index = item.at("index").item<std::int64_t>();
  const auto& episode = all_episodes_.at(item.at("episode_index").item<std::int64_t>());
  for (const auto& f : info_.features) {
    const auto delta = deltas_.find(f.name);
    if (delta == deltas_.end()) {
      if (f.storage != Storage::Column) item[f.name] = camera_frames(f, episode, {row})[0];
      continue;
    }
    const auto query = query_frames(index, delta->second, episode.from_index, episode.to_index);
    std::vector<std::int64_t> rows;
    for (const auto i : query.indices) rows.push_back(frames_->row_of(i));
    if (f.storage == Storage::Column) {
      item[f.name] = frames_->column(f.name).index_select(0, at::tensor(rows, at::kLong));
    } else {
      auto stacked = at::stack(camera_frames(f, episode, rows));
      // LeRobot squeezes a single video frame (decode_video_frames(...).squeeze(0)), not images.
      item[f.name] = f.storage == Storage::Video ? stacked.squeeze(0) : stacked;
    }
    auto pad = at::empty({static_cast<std::int64_t>(query.is_pad.size())}, at::kBool);
    for (std::size_t k = 0; k < query.is_pad.size(); ++k) pad[static_cast<std::int64_t>(k)] = query.is_pad[k];
    item[f.name + "_is_pad"] = pad;
  }
  if (augment) {
    // LeRobot calls its transform once per camera of the item: every stacked frame alike.
    const auto cams = info_.cameras();
    for (std::size_t k = 0; k < cams.size(); ++k) {
      auto& image = item.at(cams[k]->name);
      const auto drawn = draw_transforms(options_.image_transforms, image_seed(seed, row, k), image.size(-2), image.size(-1));
      image = apply_transforms(drawn, image);
    }
  }
  return item;
}

Batch LeRobotDataset::get_batch(const std::vector<std::int64_t>& indices) const {
  return read_batch(indices, false, 0);
}

Batch LeRobotDataset::get_augmented_batch(const std::vector<std::int64_t>& indices, std::uint64_t seed) const {
  return read_batch(indices, options_.image_transforms.enable, seed);
}

Batch LeRobotDataset::read_batch(const std::vector<std::int64_t>& indices, bool augment, std::uint64_t seed) const {
  for (const auto i : indices)
    if (i < 0 || i >= size())
      throw RuntimeError("lerobot dataset: index " + std::to_string(i) + " outside [0, " + std::to_string(size()) + ")");
  std::vector<Batch> items(indices.size());
  const auto n = static_cast<std::int64_t>(indices.size());
  const auto threads = std::min<std::int64_t>(options_.num_workers, n);
  if (threads <= 1) {
    for (std::int64_t k = 0; k < n; ++k) items[k] = get_item(row_of(indices[k]), augment, seed);
  } else {
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
    std::vector<std::thread> workers;
    for (std::int64_t t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        try {
          for (auto k = t; k < n; k += threads) items[k] = get_item(row_of(indices[k]), augment, seed);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& w : workers) w.join();
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  Batch batch;
  for (const auto& [name, first] : items.front()) {
    std::vector<at::Tensor> parts;
    for (const auto& item : items) parts.push_back(item.at(name));
    batch[name] = at::stack(parts);
  }
  return batch;
}

}  // namespace shardkit::lerobot
