// The Checkpointer: format plugins, staging folder, generator state, publication, and the
// ranks' common verdict on a save.
#include "checkpointer.hpp"

#include <filesystem>
#include <functional>

#include "checkpoint_io.hpp"
#include "checkpoint_manifest.hpp"
#include "shardkit/ema_entries.hpp"
#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/files.hpp"
#include "shardkit/logging.hpp"
#include "train_options.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

namespace {

/// Runs `work`: "" when it succeeded, else what went wrong, on one line.
std::string failure_of(const std::function<void()>& work) {
  try {
    work();
    return "";
  } catch (const std::exception& e) {
    const auto text = one_line_message(e);
    return text.empty() ? "an error without a message" : text;
  }
}

/// `failure`, and when it is a full disk what this rank's part of the save needed (`bytes`) and
/// what the file system holding `root` had free when the write failed.
std::string with_space_needed(const std::string& failure, std::uint64_t bytes, const fs::path& root) {
  if (failure.find("No space left on device") == std::string::npos) return failure;
  std::error_code ec;
  const auto space = fs::space(root, ec);
  return failure + " (this rank's part of the checkpoint is about " + format_bytes(static_cast<std::int64_t>(bytes)) +
         (ec ? std::string() : ", and " + format_bytes(static_cast<std::int64_t>(space.available)) +
                                   " was free there when the write failed") +
         ")";
}

/// Bytes of the tensors this rank writes of `state` (copy 0 of its replicas).
std::uint64_t bytes_written_here(const ShardedState& state) {
  std::uint64_t bytes = 0;
  for (const auto& [key, entry] : state.tensors)
    if (entry.replicas.saved_here())
      for (const auto& chunk : entry.chunks) bytes += chunk.data.nbytes();
  return bytes;
}

/// Where `<checkpoints>/last` points ("" when there is no such link).
std::string last_target(const fs::path& checkpoints) {
  std::error_code ec;
  const auto target = fs::read_symlink(checkpoints / "last", ec);
  return ec ? "" : target.string();
}

}  // namespace

Checkpointer::Checkpointer(const Registry& registry, const Config& config, const Runtime& runtime,
                           CommGroup& world, std::string format)
    : registry_(registry), config_(config), runtime_(runtime), world_(world), name_(std::move(format)) {
  format_ = create(name_);
}

std::shared_ptr<CheckpointFormat> Checkpointer::create(const std::string& name) const {
  return registry_.create_as<CheckpointFormat>("checkpoint_format", name,
                                               plugin_context(config_, runtime_, "checkpoint_format", name));
}

std::shared_ptr<CheckpointFormat> Checkpointer::format_of(const std::string& dir) const {
  if (format_->has_model(dir)) return format_;
  for (const auto& name : registry_.names("checkpoint_format")) {
    if (name == name_) continue;
    auto other = create(name);
    if (other->has_model(dir)) {
      logger()->info("{} was saved in the '{}' format: loading it as such (new checkpoints use "
                     "--checkpoint_format={})", dir, name, name_);
      return other;
    }
  }
  return nullptr;
}

std::string Checkpointer::formats_known() const {
  std::string names;
  for (const auto& name : registry_.names("checkpoint_format")) names += (names.empty() ? "" : ", ") + name;
  return names;
}

void Checkpointer::load(ShardedState& wanted, const std::string& dir, CheckpointFormat& format) const {
  format.load(wanted, dir, &world_);
}

std::string Checkpointer::save(const std::string& root, const std::string& name, const ShardedState& state,
                               const std::map<std::string, std::string>& files,
                               const at::Tensor& rng_state) const {
  const auto tmp = fs::path(root) / (".tmp-" + name);
  const auto final_dir = (fs::path(root) / name).string();
  const bool main = world_.rank() == 0;
  // Each stage ends with every rank's word, exchanged (the exchange is also the stage's
  // barrier): when one rank fails (a full disk), every rank stops there together, rank 0
  // removes the unfinished folder, and nothing is published. A rank that only threw would
  // leave the others waiting in the next collective.
  auto settle = [&](const std::string& mine) {
    std::string failure;
    for (const auto& answer : world_.all_gather_bytes(mine))
      if (failure.empty()) failure = answer;
    if (failure.empty()) return;
    if (main) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
    }
    const auto last = last_target(root);
    throw RuntimeError("checkpoint " + final_dir + " was not saved: " + failure + ". Its unfinished files were removed; " +
                       (last.empty() ? std::string("there is no earlier checkpoint")
                                     : (fs::path(root) / "last").string() + " still points to " + last +
                                           ": fix the cause and continue with --resume=true --output_dir=" +
                                           fs::path(root).parent_path().string()) +
                       ".");
  };
  std::string mine;
  if (main) {
    mine = failure_of([&] {
      std::error_code ec;
      fs::remove_all(tmp, ec);
      make_directories((tmp / "pretrained_model").string());
      make_directories((tmp / "training_state").string());
      if (!state.keys_with_prefix("ema.").empty()) make_directories((tmp / kPretrainedEmaFolder).string());
    });
  }
  settle(mine);  // the folder exists before any rank writes into it
  settle(with_space_needed(failure_of([&] {
                             format_->save(state, tmp.string(), &world_);
                             save_rng_state(rng_state_path(tmp.string(), runtime_.rank), rng_state);
                           }),
                           bytes_written_here(state) + rng_state.nbytes(), root));
  // every rank's files are complete before rank 0 publishes
  if (main) {
    std::uint64_t bytes = 0;
    for (const auto& [path, text] : files) bytes += text.size();
    mine = with_space_needed(failure_of([&] {
                               for (const auto& [path, text] : files) write_text_file((tmp / path).string(), text);
                               write_manifest(tmp.string());  // last: it lists (and checksums) every file above
                               publish_checkpoint(tmp.string(), final_dir);
                             }),
                             bytes, root);
  }
  settle(mine);
  return final_dir;
}

}  // namespace shardkit::train
