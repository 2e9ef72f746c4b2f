// DeepSpeed config fields mapped onto shardkit options, "auto" resolved, contradictions refused.
#include "deepspeed_config.hpp"

#include <cmath>
#include <cstdlib>

#include "shardkit/error.hpp"

namespace shardkit::train {
namespace {

struct Mapping {
  const char* deepspeed;  // flattened DeepSpeed key
  const char* shardkit;   // shardkit option key
};

const Mapping kMappings[] = {
    {"zero_optimization.stage", "accelerator.zero.stage"},
    {"zero_optimization.reduce_bucket_size", "accelerator.zero.reduce_bucket_size"},
    {"zero_optimization.stage3_param_persistence_threshold", "accelerator.zero.stage3_param_persistence_threshold"},
    {"train_micro_batch_size_per_gpu", "batch_size"},
    {"gradient_accumulation_steps", "accelerator.gradient_accumulation.steps"},
    {"gradient_clipping", "optimizer.grad_clip_norm"},
    {"optimizer.params.lr", "optimizer.lr"},
    {"optimizer.params.eps", "optimizer.eps"},
    {"optimizer.params.weight_decay", "optimizer.weight_decay"},
};

// Fields whose value shardkit already behaves as (true) and only mentions otherwise.
const char* const kAlwaysOn[] = {"zero_optimization.overlap_comm", "zero_optimization.contiguous_gradients"};

bool is_auto(const Value& v) { return std::holds_alternative<std::string>(v) && std::get<std::string>(v) == "auto"; }

bool same(const Value& a, const Value& b) {
  const auto ta = to_string(a), tb = to_string(b);
  if (ta == tb) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double da = std::strtod(ta.c_str(), &end_a), db = std::strtod(tb.c_str(), &end_b);
  return *end_a == '\0' && *end_b == '\0' && !ta.empty() && !tb.empty() && da == db;
}

bool truthy(const Value& v) {
  const auto t = to_string(v);
  return t == "true" || t == "1";
}

const RawValue* explicit_value(const RawConfig& flags, const RawConfig& file, const std::string& key) {
  if (auto it = flags.find(key); it != flags.end()) return &it->second;
  if (auto it = file.find(key); it != file.end()) return &it->second;
  return nullptr;
}

}  // namespace

DeepSpeedConfig apply_deepspeed_config(const std::string& path, const RawConfig& flags, RawConfig& file) {
  const RawConfig ds = load_config_file(path);
  DeepSpeedConfig out;
  for (const auto& [key, raw] : ds) {
    const auto& value = raw.value;
    const Mapping* mapping = nullptr;
    for (const auto& m : kMappings)
      if (key == m.deepspeed) mapping = &m;
    if (mapping != nullptr) {
      if (is_auto(value)) continue;
      if (const auto* given = explicit_value(flags, file, mapping->shardkit)) {
        if (!same(given->value, value))
          throw ConfigError(raw.origin + ": " + key + "=" + to_string(value) + " contradicts --" + mapping->shardkit +
                            "=" + to_string(given->value) +
                            (given->origin.rfind("--", 0) == 0 ? "" : " (from " + given->origin + ")") +
                            "; make them agree, or write \"auto\" in " +
                            path + " to take shardkit's value");
        continue;
      }
      file[mapping->shardkit] = RawValue{value, raw.origin + " (" + key + ")"};
      continue;
    }
    if ((key == "bf16.enabled" || key == "fp16.enabled") && truthy(value))
      throw ConfigError(raw.origin + ": " + key + "=true asks for mixed precision, which the zero backend does not "
                        "implement yet; set it to false (training runs in fp32)");
    if (key == "zero_optimization.offload_optimizer.device" || key == "zero_optimization.offload_param.device") {
      const auto device = to_string(value);
      if (device == "nvme")
        throw ConfigError(raw.origin + ": " + key + "=nvme: offloading to NVMe is not implemented; use \"none\" or \"cpu\"");
      if (device == "cpu") out.ignored.push_back(key + "=cpu (CPU runs keep everything in CPU memory already)");
      continue;
    }
    if (key == "train_batch_size") {
      if (!is_auto(value)) {
        out.train_batch_size = std::llround(std::strtod(to_string(value).c_str(), nullptr));
        out.train_batch_size_origin = raw.origin;
      }
      continue;
    }
    if (key == "bf16.enabled" || key == "fp16.enabled" || is_auto(value)) continue;
    bool always_on = false;
    for (const auto* k : kAlwaysOn) always_on = always_on || key == k;
    if (always_on && truthy(value)) continue;
    out.ignored.push_back(key + "=" + to_string(value));
  }
  return out;
}

void check_deepspeed_batch(const DeepSpeedConfig& ds, std::int64_t micro, std::int64_t accum, int world_size) {
  if (ds.train_batch_size == 0) return;
  const auto want = micro * accum * world_size;
  if (ds.train_batch_size != want)
    throw ConfigError(ds.train_batch_size_origin + ": train_batch_size=" + std::to_string(ds.train_batch_size) +
                      " is not batch_size " + std::to_string(micro) + " x gradient accumulation " +
                      std::to_string(accum) + " x " + std::to_string(world_size) + " processes = " +
                      std::to_string(want) + "; fix one of them or write \"auto\"");
}

}  // namespace shardkit::train
