// DeepSpeed config fields mapped onto shardkit options, "auto" resolved, contradictions refused.
#include "deepspeed_config.hpp"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "shardkit/comma_list.hpp"
#include "shardkit/config.hpp"
#include "shardkit/error.hpp"

namespace shardkit::zero {
namespace {

struct Mapping {
  const char* deepspeed;  // flattened DeepSpeed key
  const char* shardkit;   // shardkit option key
  bool own;               // the key is zero's own, under its option prefix
};

const char* const kAccum = "accelerator.gradient_accumulation.steps";

const Mapping kMappings[] = {
    {"zero_optimization.stage", "stage", true},
    {"zero_optimization.reduce_bucket_size", "reduce_bucket_size", true},
    {"zero_optimization.stage3_param_persistence_threshold", "stage3_param_persistence_threshold", true},
    {"train_micro_batch_size_per_gpu", "batch_size", false},
    {"gradient_accumulation_steps", kAccum, false},
    {"gradient_clipping", "optimizer.grad_clip_norm", false},
    {"optimizer.params.lr", "optimizer.lr", false},
    {"optimizer.params.eps", "optimizer.eps", false},
    {"optimizer.params.weight_decay", "optimizer.weight_decay", false},
    {"fp16.loss_scale_window", "accelerator.fp16.growth_interval", false},
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

/// Sets shardkit option `key` to `value` from DeepSpeed field `field`, unless the user gave it:
/// then the two must agree.
void take(const RawConfig& flags, RawConfig& file, const std::string& path, const RawValue& field_raw,
          const std::string& field, const std::string& key, const Value& value) {
  if (const auto* given = explicit_value(flags, file, key)) {
    if (!same(given->value, value))
      throw ConfigError(field_raw.origin + ": " + field + " asks for --" + key + "=" + to_string(value) +
                        ", which contradicts --" + key + "=" + to_string(given->value) +
                        (given->origin.rfind("--", 0) == 0 ? "" : " (from " + given->origin + ")") +
                        "; make them agree, or write \"auto\" in " + path + " to take shardkit's value");
    return;
  }
  file[key] = RawValue{value, field_raw.origin + " (" + field + ")"};
}

/// DeepSpeed's "bf16" and "fp16" sections: enabled picks --accelerator.mixed_precision (as Hugging
/// Face's integration does), initial_scale_power the fp16 loss scale to start from; the
/// fields shardkit has no counterpart of are returned to be listed as ignored.
void apply_precision(const RawConfig& ds, const RawConfig& flags, RawConfig& file, const std::string& path,
                     std::vector<std::string>& ignored) {
  const auto enabled = [&](const char* key) {
    const auto it = ds.find(key);
    return it != ds.end() && !is_auto(it->second.value) && truthy(it->second.value) ? &it->second : nullptr;
  };
  const auto* bf16 = enabled("bf16.enabled");
  const auto* fp16 = enabled("fp16.enabled");
  if (bf16 && fp16)
    throw ConfigError(path + ": bf16.enabled and fp16.enabled are both true; enable one of them");
  if (bf16) take(flags, file, path, *bf16, "bf16.enabled=true", "accelerator.mixed_precision", std::string("bf16"));
  if (fp16) take(flags, file, path, *fp16, "fp16.enabled=true", "accelerator.mixed_precision", std::string("fp16"));
  for (const auto* key : {"bf16.enabled", "fp16.enabled"}) {
    const auto it = ds.find(key);
    if (it == ds.end() || is_auto(it->second.value) || truthy(it->second.value)) continue;
    const auto* given = explicit_value(flags, file, "accelerator.mixed_precision");
    const std::string kind = std::string(key).substr(0, 4);
    if (given && to_string(given->value) == kind)
      throw ConfigError(it->second.origin + ": " + key + "=false contradicts --accelerator.mixed_precision=" + kind +
                        "; make them agree, or write \"auto\" in " + path + " to take shardkit's value");
  }
  if (const auto it = ds.find("fp16.initial_scale_power"); it != ds.end() && !is_auto(it->second.value)) {
    const auto power = std::strtod(to_string(it->second.value).c_str(), nullptr);
    take(flags, file, path, it->second, "fp16.initial_scale_power=" + to_string(it->second.value),
         "accelerator.fp16.init_scale", std::ldexp(1.0, static_cast<int>(power)));
  }
  if (const auto it = ds.find("fp16.loss_scale"); it != ds.end() && !is_auto(it->second.value) &&
                                                   std::strtod(to_string(it->second.value).c_str(), nullptr) != 0)
    throw ConfigError(it->second.origin + ": fp16.loss_scale=" + to_string(it->second.value) +
                      " asks for a static loss scale; shardkit scales dynamically: set it to 0 (dynamic) and "
                      "choose the first scale with fp16.initial_scale_power");
  for (const auto& [key, raw] : ds) {
    const bool precision = key.rfind("bf16.", 0) == 0 || key.rfind("fp16.", 0) == 0;
    if (!precision || key == "bf16.enabled" || key == "fp16.enabled" || key == "fp16.initial_scale_power" ||
        key == "fp16.loss_scale" || key == "fp16.loss_scale_window" || is_auto(raw.value))
      continue;
    ignored.push_back(key + "=" + to_string(raw.value));
  }
}

}  // namespace

void read_deepspeed_config(const ConfigLayerRequest& request) {
  const RawConfig& flags = *request.flags;
  RawConfig& file = *request.file;
  const auto* path_value = explicit_value(flags, file, request.prefix + "config_file");
  const std::string path = path_value ? to_string(path_value->value) : "";
  if (path.empty()) return;
  const RawConfig ds = load_config_file(path);
  std::vector<std::string> ignored;
  for (const auto& [key, raw] : ds) {
    const auto& value = raw.value;
    const Mapping* mapping = nullptr;
    for (const auto& m : kMappings)
      if (key == m.deepspeed) mapping = &m;
    if (mapping != nullptr) {
      if (is_auto(value)) continue;
      const std::string option = mapping->own ? request.prefix + mapping->shardkit : mapping->shardkit;
      if (const auto* given = explicit_value(flags, file, option)) {
        if (!same(given->value, value))
          throw ConfigError(raw.origin + ": " + key + "=" + to_string(value) + " contradicts --" + option + "=" +
                            to_string(given->value) +
                            (given->origin.rfind("--", 0) == 0 ? "" : " (from " + given->origin + ")") +
                            "; make them agree, or write \"auto\" in " + path + " to take shardkit's value");
        continue;
      }
      file[option] = RawValue{value, raw.origin + " (" + key + ")"};
      continue;
    }
    if (key == "zero_optimization.offload_optimizer.device" || key == "zero_optimization.offload_param.device") {
      const auto device = to_string(value);
      if (device == "nvme")
        throw ConfigError(raw.origin + ": " + key + "=nvme: offloading to NVMe is not implemented; use \"none\" or \"cpu\"");
      if (device == "cpu") ignored.push_back(key + "=cpu (CPU runs keep everything in CPU memory already)");
      continue;
    }
    // train_batch_size is checked once the batch layout is resolved (check_deepspeed_batch).
    if (key == "train_batch_size" || key.rfind("bf16.", 0) == 0 || key.rfind("fp16.", 0) == 0 || is_auto(value))
      continue;
    bool always_on = false;
    for (const auto* k : kAlwaysOn) always_on = always_on || key == k;
    if (always_on && truthy(value)) continue;
    ignored.push_back(key + "=" + to_string(value));
  }
  apply_precision(ds, flags, file, path, ignored);
  if (!ignored.empty())
    request.warnings->push_back(path + ": shardkit does not implement these DeepSpeed fields and ignores them: " +
                                join_list(ignored, ", "));
}

void check_deepspeed_batch(const ConfigCheckRequest& request) {
  const Config& config = *request.config;
  const auto path_key = request.prefix + "config_file";
  for (const auto* key : {path_key.c_str(), "batch_size", kAccum})
    if (!config.has(key) || request.refused->count(key)) return;
  const auto path = config.get_string(path_key);
  if (path.empty()) return;
  const RawConfig ds = load_config_file(path);
  const auto it = ds.find("train_batch_size");
  if (it == ds.end() || is_auto(it->second.value)) return;
  const auto total = std::llround(std::strtod(to_string(it->second.value).c_str(), nullptr));
  if (total == 0) return;  // not a number DeepSpeed would use either: nothing to hold the layout to
  const auto micro = config.get_int("batch_size"), accum = config.get_int(kAccum);
  const auto want = micro * accum * request.world_size;
  if (total != want)
    request.errors->push_back(it->second.origin + ": train_batch_size=" + std::to_string(total) +
                              " is not batch_size " + std::to_string(micro) + " x gradient accumulation " +
                              std::to_string(accum) + " x " + std::to_string(request.world_size) +
                              " processes = " + std::to_string(want) + "; fix one of them or write \"auto\"");
}

}  // namespace shardkit::zero
