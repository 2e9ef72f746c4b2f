// Plugin entry of the `lerobot` dataset: its options and factory.
#include <spdlog/logger.h>

#include <shardkit/plugin.hpp>

#include "lerobot_dataset.hpp"

namespace {

const shardkit::OptionSpec kOptions[] = {
    {"repo_id", shardkit::OptionType::String, "", "Dataset <user>/<name>, read from $HF_LEROBOT_HOME/<repo_id> (no download)", nullptr, nullptr, nullptr},
    {"root", shardkit::OptionType::String, "", "Dataset folder (holding meta/info.json); wins over the repo_id lookup", nullptr, nullptr, nullptr},
    {"episodes", shardkit::OptionType::String, "", "Episodes to train on, e.g. [0,2,5] (default: all)", nullptr, nullptr, nullptr},
    {"tolerance_s", shardkit::OptionType::Float, "0.0001", "Largest gap between a video frame's time and the time asked for", "0", nullptr, nullptr},
    {"num_workers", shardkit::OptionType::Int, "0", "Threads decoding each batch (0 = the loader's own thread)", "0", nullptr, nullptr},
    {"use_imagenet_stats", shardkit::OptionType::Bool, "true", "Normalize cameras with ImageNet's mean/std instead of the dataset's, as LeRobot does by default", nullptr, nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  const auto& o = ctx.options;
  shardkit::lerobot::LeRobotOptions options;
  options.repo_id = o.get_string("repo_id");
  options.root = o.get_string("root");
  options.episodes = o.get_string("episodes");
  options.tolerance_s = o.get_float("tolerance_s");
  options.num_workers = o.get_int("num_workers");
  options.use_imagenet_stats = o.get_bool("use_imagenet_stats");
  auto dataset = std::make_shared<shardkit::lerobot::LeRobotDataset>(options);
  if (ctx.logger)
    ctx.logger->info("LeRobot dataset {}: {} episodes, {} frames at {} fps, {} features", dataset->info().root,
                     dataset->episodes().size(), dataset->size(), dataset->info().fps, dataset->info().features.size());
  return dataset;
}

}  // namespace

SHARDKIT_PLUGIN(dataset, lerobot, "0.1.0",
                "A local LeRobot dataset (format v3.0): parquet columns, AV1/H.264 videos and PNG images", kOptions, make)
