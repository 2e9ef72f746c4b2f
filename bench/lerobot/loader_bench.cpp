// Frames/s of the lerobot dataset plugin through the training loader: batch 8, ACT's delta indices, N decode threads.
//
// Usage: bench_lerobot_loader <dataset root> <num_workers> [batches=100] [chunk=100] [step_ms=0] [augment=0]
// Prints one JSON line: frames/s (camera frames decoded per second, one per sample), samples/s,
// and, with step_ms > 0 (a simulated training step on the main thread), the share of the loop
// spent waiting for data with the loader's prefetching. augment=1 switches on LeRobot's image
// transforms (--dataset.image_transforms.enable=true, default transforms).
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "../../apps/shardkit-train/src/data_loader.hpp"
#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/loader.hpp"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <dataset root> <num_workers> [batches=100] [chunk=100] [step_ms=0] [augment=0]\n",
                 argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  const std::int64_t workers = std::stoll(argv[2]);
  const int batches = argc > 3 ? std::stoi(argv[3]) : 100;
  const std::int64_t chunk = argc > 4 ? std::stoll(argv[4]) : 100;
  const double step_ms = argc > 5 ? std::stod(argv[5]) : 0;
  const bool augment = argc > 6 && std::string(argv[6]) == "1";

  shardkit::Registry registry;
  registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-dataset-lerobot.so");
  shardkit::PluginContext ctx;
  const auto* d = registry.get("dataset", "lerobot").descriptor;
  for (std::uint32_t i = 0; i < d->num_options; ++i) {  // every option at its default
    const auto& spec = d->options[i];
    if (spec.type == shardkit::OptionType::Int) ctx.options.set(spec.name, std::int64_t{std::stoll(spec.default_value)});
    else if (spec.type == shardkit::OptionType::Float) ctx.options.set(spec.name, std::stod(spec.default_value));
    else if (spec.type == shardkit::OptionType::Bool) ctx.options.set(spec.name, std::string(spec.default_value) == "true");
    else ctx.options.set(spec.name, std::string(spec.default_value));
  }
  ctx.options.set("root", root);
  ctx.options.set("num_workers", workers);
  ctx.options.set("image_transforms.enable", augment);
  auto dataset = registry.create_as<shardkit::Dataset>("dataset", "lerobot", ctx);
  // ACT: the current state and camera frame, the next `chunk` actions.
  shardkit::DeltaIndices deltas{{"action", {}}};
  for (std::int64_t i = 0; i < chunk; ++i) deltas["action"].push_back(i);
  dataset->set_delta_indices(deltas);

  shardkit::train::LoaderOptions options;
  options.prefetch = step_ms > 0 ? 2 : 0;
  shardkit::train::DataLoader loader(*dataset, 8, 1000, 0, 1, options);
  loader.next();  // warm: opens the files and decoders
  const auto t0 = Clock::now();
  double waited = 0;
  for (int b = 0; b < batches; ++b) {
    const auto w0 = Clock::now();
    auto batch = loader.next();
    waited += std::chrono::duration<double>(Clock::now() - w0).count();
    if (step_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_ms));
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("{\"num_workers\": %lld, \"batch_size\": 8, \"batches\": %d, \"samples_per_s\": %.1f, "
              "\"frames_per_s\": %.1f, \"step_ms\": %.1f, \"wait_share\": %.3f, \"augment\": %s}\n",
              static_cast<long long>(workers), batches, batches * 8 / s, batches * 8 / s, step_ms, waited / s,
              augment ? "true" : "false");
  return 0;
}
