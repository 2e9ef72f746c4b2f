// Reading Hugging Face model folders: config.json's form, model.safetensors or its sharded index.
#include "shardkit/hf_folder.hpp"

#include <boost/json.hpp>
#include <c10/util/StringUtil.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
namespace st = shardkit::safetensors;

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

/// Every tensor of one safetensors file, copied out of the mapping.
void read_file_into(const fs::path& path, std::map<std::string, at::Tensor>& out) {
  if (!fs::is_regular_file(path))
    throw FormatError(path.string() + " is missing (the folder's " + kIndexFile + " names it)");
  const auto file = st::File::open(path.string());
  for (const auto& name : file.names()) out[name] = st::to_tensor(file.get(name));
}

/// The index's weight_map: tensor name -> file name.
std::map<std::string, std::string> weight_map(const fs::path& index) {
  json::error_code ec;
  const auto value = json::parse(read_text_file(index.string()), ec);
  const auto* map = (!ec && value.is_object()) ? value.as_object().if_contains("weight_map") : nullptr;
  if (map == nullptr || !map->is_object())
    throw FormatError(index.string() + " is not a safetensors index: it needs a \"weight_map\" object "
                      "of tensor name -> file name");
  std::map<std::string, std::string> out;
  for (const auto& [name, file] : map->as_object()) {
    if (!file.is_string())
      throw FormatError(index.string() + ": weight_map[\"" + std::string(name) + "\"] is not a file name");
    const std::string file_name(file.as_string());
    if (file_name.find('/') != std::string::npos || file_name == "..")
      throw FormatError(index.string() + ": weight_map[\"" + std::string(name) + "\"] names '" + file_name +
                        "', outside the folder");
    out[std::string(name)] = file_name;
  }
  return out;
}

}  // namespace

namespace {

/// config.json as an object (empty when missing or not a JSON object).
json::object read_config_object(const std::string& folder) {
  const auto path = fs::path(folder) / "config.json";
  if (!fs::is_regular_file(path)) return {};
  json::error_code ec;
  auto value = json::parse(read_text_file(path.string()), ec);
  if (ec || !value.is_object()) return {};
  return std::move(value.as_object());
}

}  // namespace

bool is_hf_model_folder(const std::string& folder) {
  const auto object = read_config_object(folder);
  return object.contains("model_type") && !object.contains("type");
}

std::string hf_model_type(const std::string& folder) {
  const auto object = read_config_object(folder);
  const auto* type = object.if_contains("model_type");
  return type != nullptr && type->is_string() ? std::string(type->as_string()) : std::string();
}

bool has_hf_weights(const std::string& folder) {
  return fs::is_regular_file(fs::path(folder) / kSingleFile) || fs::is_regular_file(fs::path(folder) / kIndexFile);
}

std::map<std::string, at::Tensor> read_hf_weights(const std::string& folder) {
  const fs::path root(folder);
  std::map<std::string, at::Tensor> tensors;
  if (fs::is_regular_file(root / kSingleFile)) {
    read_file_into(root / kSingleFile, tensors);
    return tensors;
  }
  if (!fs::is_regular_file(root / kIndexFile))
    throw FormatError(folder + " holds neither " + kSingleFile + " nor " + kIndexFile +
                      " (with its model-0000k-of-0000n.safetensors files): it has no weights to load");
  const auto map = weight_map(root / kIndexFile);
  std::set<std::string> files;
  for (const auto& [name, file] : map) files.insert(file);
  for (const auto& file : files) read_file_into(root / file, tensors);
  for (const auto& [name, file] : map)
    if (!tensors.count(name))
      throw FormatError((root / file).string() + " has no tensor '" + name + "', which " + kIndexFile +
                        " places there");
  return tensors;
}

void load_hf_weights(torch::nn::Module& module, const std::string& folder, const std::vector<std::string>& ignored) {
  load_hf_weights_with_dtypes(module, folder, ignored);
}

StoredDtypes load_hf_weights_with_dtypes(torch::nn::Module& module, const std::string& folder,
                                         const std::vector<std::string>& ignored) {
  auto saved = read_hf_weights(folder);
  StoredDtypes stored;
  for (const auto& [name, tensor] : saved) ++stored[tensor.scalar_type()];
  auto params = module.named_parameters();
  torch::NoGradGuard no_grad;
  for (auto& item : params) {
    const auto it = saved.find(item.key());
    if (it == saved.end())
      throw FormatError(folder + ": the weights have no tensor '" + item.key() +
                        "', which the model needs (missing key); does config.json describe these weights?");
    auto& target = item.value();
    if (it->second.sizes() != target.sizes())
      throw FormatError(folder + ": tensor '" + item.key() + "' has shape " + c10::str(it->second.sizes()) +
                        " in the weights but " + c10::str(target.sizes()) +
                        " in the model that config.json describes (shape mismatch)");
    target.copy_(it->second);  // casts bf16/fp16 files to the parameter's dtype
    saved.erase(it);
  }
  for (const auto& name : ignored) saved.erase(name);
  if (!saved.empty())
    throw FormatError(folder + ": the weights hold tensor '" + saved.begin()->first + "'" +
                      (saved.size() > 1 ? " (and " + std::to_string(saved.size() - 1) + " more)" : "") +
                      ", which the model has no parameter for (unexpected key); does config.json describe "
                      "these weights?");
  return stored;
}

bool is_tokenizer_file(const std::string& name) {
  // transformers' tokenizer file names (tokenization_utils_base.py and the models' vocab_files_names).
  static const std::set<std::string> exact = {"special_tokens_map.json", "added_tokens.json", "chat_template.json",
                                              "merges.txt", "tekken.json", "generation_config.json"};
  const auto starts = [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; };
  const auto ends = [&](const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (name.empty() || name[0] == '.') return false;
  return exact.count(name) || starts("tokenizer.") || name == "tokenizer_config.json" || starts("vocab.") ||
         ends(".jinja") || ends(".model") || ends(".spm") || ends(".tiktoken");
}

std::vector<std::string> hf_tokenizer_files(const std::string& folder) {
  std::vector<std::string> present;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && is_tokenizer_file(name)) present.push_back(name);
  }
  std::sort(present.begin(), present.end());
  return present;
}

std::string unsupported_hf_model_message(const std::string& folder, const std::string& model_type,
                                         const std::vector<std::string>& supported_types) {
  std::string types;
  for (const auto& t : supported_types) types += (types.empty() ? "'" : ", '") + t + "'";
  return "--policy.path=" + folder + " holds a '" + model_type + "' model (config.json's model_type), and shardkit " +
         "has no policy for it: the Hugging Face model types it supports are " +
         (types.empty() ? std::string("none (no loaded policy reads such a folder)") : types) +
         " (each trained by the policy of that name); use a model of a supported type, or write a policy plugin "
         "named '" + model_type + "' (docs/plugins.md)";
}

}  // namespace shardkit
