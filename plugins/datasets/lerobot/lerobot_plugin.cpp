// Plugin entry of the `lerobot` dataset: its options and factory.
#include <spdlog/logger.h>

#include <shardkit/config.hpp>
#include <shardkit/error.hpp>
#include <shardkit/plugin.hpp>

#include "lerobot_dataset.hpp"

namespace {

const shardkit::OptionSpec kOptions[] = {
    {"repo_id", shardkit::OptionType::String, "", "Dataset <user>/<name>, read from $HF_LEROBOT_HOME/<repo_id> (no download)", nullptr, nullptr, nullptr},
    {"root", shardkit::OptionType::String, "", "Dataset folder (holding meta/info.json); wins over the repo_id lookup", nullptr, nullptr, nullptr},
    {"episodes", shardkit::OptionType::String, "", "Episodes to train on, e.g. [0,2,5] (default: all)", nullptr, nullptr, nullptr},
    {"exclude_episodes", shardkit::OptionType::String, "", "Episodes to drop (e.g. corrupt ones), applied on top of --dataset.episodes, e.g. [3,7]", nullptr, nullptr, nullptr},
    {"eval_split", shardkit::OptionType::Float, "0", "Fraction of episodes held out per task for offline evaluation (--eval_steps), never trained on: the last ceil(n x fraction) of each task's; 0 = none, below 1", "0", nullptr, nullptr},
    {"split", shardkit::OptionType::String, "train", "Which episodes: train, or validation (those --dataset.eval_split holds out; the trainer's evaluation reads them)", nullptr, nullptr, "train|validation"},
    {"max_eval_samples", shardkit::OptionType::Int, "0", "Validation split: at most this many frames, max(1, N / tasks) of each task (LeRobot's --max_eval_samples, which sets it); 0 = all", "0", nullptr, nullptr},
    {"tolerance_s", shardkit::OptionType::Float, "0.0001", "Largest gap between a video frame's time and the time asked for", "0", nullptr, nullptr},
    {"num_workers", shardkit::OptionType::Int, "0", "Threads decoding each batch (0 = the loader's own thread)", "0", nullptr, nullptr},
    {"use_imagenet_stats", shardkit::OptionType::Bool, "true", "Normalize cameras with ImageNet's mean/std instead of the dataset's, as LeRobot does by default", nullptr, nullptr, nullptr},
    // LeRobot's ImageTransformsConfig (camera augmentation), with its defaults.
    {"image_transforms.enable", shardkit::OptionType::Bool, "false", "Augment camera images with LeRobot's random colour, sharpness and affine jitter", nullptr, nullptr, nullptr},
    {"image_transforms.max_num_transforms", shardkit::OptionType::Int, "3", "How many of the transforms each camera image gets, drawn by weight", "1", nullptr, nullptr},
    {"image_transforms.random_order", shardkit::OptionType::Bool, "false", "Apply the drawn transforms in random order instead of the listed one", nullptr, nullptr, nullptr},
    {"image_transforms.brightness", shardkit::OptionType::String, "0.8,1.2", "Range lo,hi of the brightness factor", nullptr, nullptr, nullptr},
    {"image_transforms.contrast", shardkit::OptionType::String, "0.8,1.2", "Range lo,hi of the contrast factor", nullptr, nullptr, nullptr},
    {"image_transforms.saturation", shardkit::OptionType::String, "0.5,1.5", "Range lo,hi of the saturation factor", nullptr, nullptr, nullptr},
    {"image_transforms.hue", shardkit::OptionType::String, "-0.05,0.05", "Range lo,hi of the hue shift, within [-0.5, 0.5]", nullptr, nullptr, nullptr},
    {"image_transforms.sharpness", shardkit::OptionType::String, "0.5,1.5", "Range lo,hi of the sharpness factor", nullptr, nullptr, nullptr},
    {"image_transforms.affine_degrees", shardkit::OptionType::String, "-5,5", "Range lo,hi of the affine rotation in degrees", nullptr, nullptr, nullptr},
    {"image_transforms.affine_translate", shardkit::OptionType::String, "0.05,0.05", "Largest affine shift x,y as fractions of the width and height", nullptr, nullptr, nullptr},
    {"image_transforms.tfs.brightness.weight", shardkit::OptionType::Float, "1", "Weight of drawing brightness (0 = never)", "0", nullptr, nullptr},
    {"image_transforms.tfs.contrast.weight", shardkit::OptionType::Float, "1", "Weight of drawing contrast (0 = never)", "0", nullptr, nullptr},
    {"image_transforms.tfs.saturation.weight", shardkit::OptionType::Float, "1", "Weight of drawing saturation (0 = never)", "0", nullptr, nullptr},
    {"image_transforms.tfs.hue.weight", shardkit::OptionType::Float, "1", "Weight of drawing hue (0 = never)", "0", nullptr, nullptr},
    {"image_transforms.tfs.sharpness.weight", shardkit::OptionType::Float, "1", "Weight of drawing sharpness (0 = never)", "0", nullptr, nullptr},
    {"image_transforms.tfs.affine.weight", shardkit::OptionType::Float, "1", "Weight of drawing affine (0 = never)", "0", nullptr, nullptr},
};

/// --dataset.image_transforms.* as LeRobot's ImageTransformsConfig.
shardkit::lerobot::ImageTransformsConfig image_transforms(const shardkit::Config& o) {
  using shardkit::lerobot::parse_range;
  shardkit::lerobot::ImageTransformsConfig c;
  const std::string p = "image_transforms.";
  c.enable = o.get_bool(p + "enable");
  c.max_num_transforms = o.get_int(p + "max_num_transforms");
  c.random_order = o.get_bool(p + "random_order");
  c.brightness = parse_range(o.get_string(p + "brightness"), "brightness");
  c.contrast = parse_range(o.get_string(p + "contrast"), "contrast");
  c.saturation = parse_range(o.get_string(p + "saturation"), "saturation");
  c.hue = parse_range(o.get_string(p + "hue"), "hue");
  c.sharpness = parse_range(o.get_string(p + "sharpness"), "sharpness");
  c.degrees = parse_range(o.get_string(p + "affine_degrees"), "affine_degrees");
  c.translate = parse_range(o.get_string(p + "affine_translate"), "affine_translate");
  for (std::size_t k = 0; k < shardkit::lerobot::kNumTransformKinds; ++k)
    c.weights[k] = o.get_float(p + "tfs." + shardkit::lerobot::transform_name(static_cast<shardkit::lerobot::TransformKind>(k)) + ".weight");
  shardkit::lerobot::validate(c);
  return c;
}

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  const auto& o = ctx.options;
  shardkit::lerobot::LeRobotOptions options;
  options.repo_id = o.get_string("repo_id");
  options.root = o.get_string("root");
  options.episodes = o.get_string("episodes");
  options.exclude_episodes = o.get_string("exclude_episodes");
  options.eval_split = o.get_float("eval_split");
  if (!(options.eval_split >= 0 && options.eval_split < 1))
    throw shardkit::ConfigError("--dataset.eval_split=" + shardkit::to_string(shardkit::Value(options.eval_split)) +
                                ": eval_split must be in [0.0, 1.0): the fraction of each task's episodes held out");
  options.validation = o.get_string("split") == "validation";
  options.max_eval_samples = o.get_int("max_eval_samples");
  options.tolerance_s = o.get_float("tolerance_s");
  options.num_workers = o.get_int("num_workers");
  options.use_imagenet_stats = o.get_bool("use_imagenet_stats");
  // LeRobot evaluates on the held-out episodes without augmentation.
  options.image_transforms = image_transforms(o);
  if (options.validation) options.image_transforms.enable = false;
  auto dataset = std::make_shared<shardkit::lerobot::LeRobotDataset>(options);
  if (ctx.logger && !options.validation) {
    for (const auto& warning : dataset->warnings()) ctx.logger->warn("{}", warning);
    ctx.logger->info("LeRobot dataset {}: {} episodes, {} frames at {} fps, {} features", dataset->info().root,
                     dataset->episodes().size(), dataset->size(), dataset->info().fps, dataset->info().features.size());
    if (options.eval_split > 0)
      ctx.logger->info("Train/eval split: {} train, {} eval episodes (eval_split={})", dataset->episodes().size(),
                       dataset->held_out().size(), options.eval_split);
  }
  if (ctx.logger && options.image_transforms.enable)
    ctx.logger->info("LeRobot image transforms on: up to {} per camera image{}", options.image_transforms.max_num_transforms,
                     options.image_transforms.random_order ? ", in random order" : "");
  return dataset;
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(dataset, lerobot, "0.1.0",
                      "A local LeRobot dataset (format v3.0): parquet columns, AV1/H.264 videos and PNG images", kOptions,
                      make, 0u, shardkit::lerobot::LeRobotDataset)
