// The Checkpointer: format plugins, staging folder, generator state, publication.
#include "checkpointer.hpp"

#include <filesystem>

#include "checkpoint_io.hpp"
#include "checkpoint_manifest.hpp"
#include "shardkit/files.hpp"
#include "shardkit/logging.hpp"
#include "train_options.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;

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
                               const std::map<std::string, std::string>& files) const {
  const auto tmp = fs::path(root) / (".tmp-" + name);
  const bool main = world_.rank() == 0;
  if (main) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    make_directories((tmp / "pretrained_model").string());
    make_directories((tmp / "training_state").string());
  }
  world_.barrier();  // the folder exists before any rank writes into it
  format_->save(state, tmp.string(), &world_);
  save_rng_state(rng_state_path(tmp.string(), runtime_.rank));
  world_.barrier();  // every rank's files are complete before rank 0 publishes
  const auto final_dir = (fs::path(root) / name).string();
  if (main) {
    for (const auto& [path, text] : files) write_text_file((tmp / path).string(), text);
    write_manifest(tmp.string());  // last: it lists (and checksums) every file above
    publish_checkpoint(tmp.string(), final_dir);
  }
  return final_dir;
}

}  // namespace shardkit::train
