// Optional capabilities of a Policy for Hugging Face model folders: it loads its own weights
// from --policy.path, and it adds files (the tokenizer's) to each checkpoint's pretrained_model/.
//
//   class MyPolicy : public shardkit::WithCapabilities<shardkit::Policy, shardkit::PretrainedWeightsLoader> {
//     bool loaded_pretrained_weights() const override { return loaded_; }  // set in the constructor
//   };
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shardkit {

/// A policy that read --policy.path's weights itself while it was constructed (a Hugging Face
/// model folder, as llama's); the trainer then loads no checkpoint for --policy.path, and names
/// the policies that offer this as the model types it supports.
class PretrainedWeightsLoader {
 public:
  static constexpr const char* kCapabilityName = "pretrained_weights";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~PretrainedWeightsLoader();
  /// True when the constructor loaded the weights of --policy.path.
  virtual bool loaded_pretrained_weights() const = 0;
};

/// A policy whose checkpoints carry more files in pretrained_model/ than config.json and the
/// weights (a language model's tokenizer files, so that the folder is a complete model).
class PretrainedFilesWriter {
 public:
  static constexpr const char* kCapabilityName = "pretrained_files";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  virtual ~PretrainedFilesWriter();
  /// File name (inside pretrained_model/) -> its whole content.
  virtual std::map<std::string, std::string> pretrained_files() const = 0;
};

}  // namespace shardkit
