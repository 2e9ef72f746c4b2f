// The base model a PEFT run trains adapters on: its files' sizes and checksums, kept in each
// checkpoint, so that a resume onto a base that changed since the run started is refused.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shardkit {
class CommGroup;
}

namespace shardkit::train {

/// Where checkpoints keep the record, relative to the checkpoint folder.
inline constexpr const char* kBaseModelFile = "training_state/base_model.json";

/// The files of a base model folder that decide its weights, with their sizes and XXH3-64
/// checksums (checkpoint_manifest's), as a checkpoint keeps them.
struct BaseModelRecord {
  struct Stamp {
    std::uint64_t size = 0;
    std::string xxh3_64;
  };
  std::string path;  ///< the base folder (absolute) when it was recorded
  /// Paths relative to `path` -> stamp: config.json, the *.safetensors files and
  /// *.safetensors.index.json directly in it, and for a shardkit checkpoint's pretrained_model
  /// (a DCP checkpoint keeps the weights beside it) the checkpoint's other model files
  /// ("../pytorch_model_fsdp_0/__0_0.distcp").
  std::map<std::string, Stamp> files;

  /// Reads base folder `base` (every file is read once for its checksum).
  static BaseModelRecord of(const std::string& base);
  /// A record as to_json() writes it; FormatError naming `origin` when it is not one.
  static BaseModelRecord parse(const std::string& text, const std::string& origin);
  std::string to_json() const;
  /// "" when folder `base` holds every recorded file with the same size and checksum, else
  /// what changed, naming the first such file.
  std::string change_in(const std::string& base) const;
};

/// A PEFT run's base model record as it starts (BaseModelRecord JSON on rank 0 of `world`, ""
/// elsewhere): base folder `base` read now, or on a resume from checkpoint `resume_dir` its
/// record checked against `base`; ConfigError on every rank, naming the changed file and what
/// to do, when the base changed since the run started.
std::string base_model_record_at_start(CommGroup& world, const std::string& base, const std::string& resume_dir);

}  // namespace shardkit::train
