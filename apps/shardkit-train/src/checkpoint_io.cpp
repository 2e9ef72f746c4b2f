// Checkpoint folder layout, training_step.json, RNG state and crash-safe publication.
#include "checkpoint_io.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/Functions.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <filesystem>
#include <mutex>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"
#include "checkpoint_manifest.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

std::string training_step_json(const TrainingStep& s) {
  return "{\n  \"step\": " + std::to_string(s.step) +
         ",\n  \"dp_world_size\": " + std::to_string(s.dp_world_size) +
         ",\n  \"batch_size\": " + std::to_string(s.batch_size) +
         ",\n  \"grad_accum_steps\": " + std::to_string(s.grad_accum_steps) +
         ",\n  \"precision\": \"" + s.precision + "\"" +
         ",\n  \"mesh\": {\"dp_replicate\": " + std::to_string(s.dp_replicate) +
         ", \"dp_shard\": " + std::to_string(s.dp_shard) + "}" +
         ",\n  \"data\": {\"epoch\": " + std::to_string(s.data.epoch) +
         ", \"batch_in_epoch\": " + std::to_string(s.data.batch_in_epoch) +
         ", \"samples_seen\": " + std::to_string(s.samples_seen) + "}" +
         ",\n  \"log_window\": " + log_window_json(s.log_window) + "\n}\n";
}

namespace {

std::int64_t int_field(const boost::json::object& obj, const char* key, const std::string& path) {
  const auto* v = obj.if_contains(key);
  if (!v || !v->is_int64())
    throw FormatError(path + ": field '" + key + "' is missing or not an integer");
  return v->as_int64();
}

const boost::json::object& object_field(const boost::json::object& obj, const char* key,
                                        const std::string& path) {
  const auto* v = obj.if_contains(key);
  if (!v || !v->is_object()) throw FormatError(path + ": field '" + key + "' is missing or not an object");
  return v->as_object();
}

}  // namespace

TrainingStep read_training_step(const std::string& path) {
  boost::json::error_code ec;
  const auto value = boost::json::parse(read_text_file(path), ec);
  if (ec || !value.is_object()) throw FormatError(path + ": not a JSON object (" + ec.message() + ")");
  const auto& o = value.as_object();
  TrainingStep s;
  s.step = int_field(o, "step", path);
  s.dp_world_size = int_field(o, "dp_world_size", path);
  s.batch_size = int_field(o, "batch_size", path);
  s.grad_accum_steps = int_field(o, "grad_accum_steps", path);
  if (const auto* p = o.if_contains("precision"); p && p->is_string())
    s.precision = std::string(p->as_string());
  const auto& mesh = object_field(o, "mesh", path);
  s.dp_replicate = int_field(mesh, "dp_replicate", path);
  s.dp_shard = int_field(mesh, "dp_shard", path);
  const auto& data = object_field(o, "data", path);
  s.data.epoch = int_field(data, "epoch", path);
  s.data.batch_in_epoch = int_field(data, "batch_in_epoch", path);
  s.samples_seen = int_field(data, "samples_seen", path);
  if (const auto* w = o.if_contains("log_window")) {  // older checkpoints have none: an empty window
    if (!w->is_object()) throw FormatError(path + ": field 'log_window' is not an object");
    s.log_window = read_log_window(w->as_object(), path);
  }
  if (s.step < 0 || s.batch_size < 1 || s.grad_accum_steps < 1 || s.dp_world_size < 1)
    throw FormatError(path + ": values out of range");
  return s;
}

std::string step_dir_name(std::int64_t step, std::int64_t total_steps) {
  const auto width = std::max<std::size_t>(6, std::to_string(total_steps).size());
  auto text = std::to_string(step);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

const std::vector<std::string>& required_checkpoint_files() {
  static const std::vector<std::string> files = {
      "pretrained_model/config.json",          "pretrained_model/train_config.json",
      "training_state/training_step.json",     "training_state/rng_state.safetensors",
      "training_state/scheduler_state.json",   "training_state/optimizer_param_groups.json"};
  return files;
}

bool is_step_dir_name(const std::string& name) {
  return !name.empty() && name.size() <= 18 && name.find_first_not_of("0123456789") == std::string::npos;
}

void check_step_matches_folder(const std::string& dir, std::int64_t recorded_step) {
  const auto name = fs::weakly_canonical(dir).filename().string();
  if (!is_step_dir_name(name)) return;  // a folder renamed by hand: nothing to compare
  if (std::stoll(name) == recorded_step) return;
  throw FormatError("inconsistent checkpoint " + dir + ": its folder is step " + name +
                    " but training_state/training_step.json records step " + std::to_string(recorded_step) +
                    "; resume from another checkpoint, or restore the files of this one");
}

void check_scheduler_matches_step(const std::string& dir, std::int64_t recorded_step, bool strict) {
  const auto path = (fs::path(dir) / "training_state/scheduler_state.json").string();
  boost::json::error_code ec;
  const auto value = boost::json::parse(read_text_file(path), ec);
  const auto* last = !ec && value.is_object() ? value.as_object().if_contains("last_epoch") : nullptr;
  if (!last || !last->is_int64()) {
    if (!strict) return;  // damage: the manifest check names the file better
    throw FormatError(path + ": not a scheduler state (no integer 'last_epoch'); resume from another "
                      "checkpoint, or restore the files of this one");
  }
  if (last->as_int64() == recorded_step) return;
  throw FormatError("inconsistent checkpoint " + dir + ": training_state/training_step.json records step " +
                    std::to_string(recorded_step) + " but training_state/scheduler_state.json has taken " +
                    std::to_string(last->as_int64()) + " steps (last_epoch); resume from another checkpoint, "
                    "or restore the files of this one");
}

std::string checkpoint_files_problem(const std::string& dir) {
  if (!fs::is_directory(dir))
    return "checkpoint folder " + dir + " does not exist; point --config_path at "
           "<output_dir>/checkpoints/<step>/pretrained_model/train_config.json";
  std::string missing;
  for (const auto& f : required_checkpoint_files())
    if (!fs::is_regular_file(fs::path(dir) / f)) missing += (missing.empty() ? "" : ", ") + f;
  if (missing.empty()) return "";
  return dir + " is not a complete shardkit checkpoint (missing: " + missing + ")";
}

void check_checkpoint_dir(const std::string& dir) {
  // A checkpoint that is missing or incomplete is the wrong thing to resume from: a
  // configuration error (exit 2), unlike a damaged file of a complete one (FormatError, exit 1).
  const auto problem = checkpoint_files_problem(dir);
  if (problem.empty()) return;
  if (!fs::is_directory(dir)) throw ConfigError(problem);
  throw ConfigError(problem + "; nothing was changed. " + other_checkpoint_advice(dir));
}

at::Tensor current_rng_state() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void save_rng_state(const std::string& path, const at::Tensor& state) {
  safetensors::write_file(path, {safetensors::ref_of("torch_rng_state", state.contiguous())});
}

std::string rng_state_path(const std::string& dir, int rank, bool for_load) {
  const auto base = std::filesystem::path(dir) / "training_state";
  const auto own = base / (rank == 0 ? std::string("rng_state.safetensors")
                                     : "rng_state_" + std::to_string(rank) + ".safetensors");
  if (for_load && !std::filesystem::exists(own)) return (base / "rng_state.safetensors").string();
  return own.string();
}

void load_rng_state(const std::string& path) {
  auto file = safetensors::File::open(path);
  const auto state = safetensors::to_tensor(file.get("torch_rng_state"));
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  try {
    gen.set_state(state);
  } catch (const std::exception& e) {
    throw FormatError(path + ": torch_rng_state is not a CPU generator state (" + e.what() + ")");
  }
}

void publish_checkpoint(const std::string& tmp, const std::string& final_dir) {
  std::error_code ec;
  // Re-saving a step (after a resume): the old copy is moved aside, not deleted, until the new
  // one is in place, so that a kill in between leaves one complete copy (restored on resume).
  const auto old = fs::path(final_dir).parent_path() / (".old-" + fs::path(final_dir).filename().string());
  const bool replacing = fs::exists(final_dir);
  if (replacing) {
    fs::remove_all(old, ec);
    fs::rename(final_dir, old, ec);
    if (ec) throw FormatError("cannot move the previous " + final_dir + " aside: " + ec.message());
  }
  fs::rename(tmp, final_dir, ec);
  if (ec) throw FormatError("cannot move checkpoint " + tmp + " to " + final_dir + ": " + ec.message());
  if (replacing) fs::remove_all(old, ec);
  const auto parent = fs::path(final_dir).parent_path();
  sync_directory(parent.string());
  const auto link_tmp = parent / ".last.tmp";
  fs::remove(link_tmp, ec);
  fs::create_symlink(fs::path(final_dir).filename(), link_tmp, ec);
  if (ec) throw FormatError("cannot create link " + link_tmp.string() + ": " + ec.message());
  fs::rename(link_tmp, parent / "last", ec);
  if (ec) throw FormatError("cannot update " + (parent / "last").string() + ": " + ec.message());
  sync_directory(parent.string());
}

}  // namespace shardkit::train
