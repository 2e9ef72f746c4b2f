// Hugging Face model folders: config.json plus model.safetensors or sharded safetensors files.
//
// A folder transformers' save_pretrained() writes holds config.json (with "model_type"),
// either model.safetensors or model-0000k-of-0000n.safetensors with model.safetensors.index.json
// (its "weight_map" names the file of every tensor), and often the tokenizer's files. A policy
// that starts from such a folder (--policy.path) reads its weights with load_hf_weights() and
// says so through PretrainedWeightsLoader, so the trainer does not look for a checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

namespace shardkit {

/// Whether `folder/config.json` is in transformers' form: a "model_type" and no shardkit or
/// LeRobot "type". False when the file is missing or not a JSON object.
bool is_hf_model_folder(const std::string& folder);

/// The "model_type" of `folder/config.json` ("" when the file is missing, not JSON or has none).
std::string hf_model_type(const std::string& folder);

/// Whether `folder` holds model.safetensors or model.safetensors.index.json.
bool has_hf_weights(const std::string& folder);

/// Every tensor of the folder's weights, by name, as saved (any dtype). Reads model.safetensors,
/// or every file model.safetensors.index.json's weight_map names. Throws FormatError naming the
/// file when neither exists, the index is malformed, a file it names is missing, or a tensor
/// the index places in a file is not there.
std::map<std::string, at::Tensor> read_hf_weights(const std::string& folder);

/// How many tensors a folder stores in each dtype.
using StoredDtypes = std::map<at::ScalarType, std::int64_t>;

/// Copies the folder's weights into `module`'s parameters of the same names, cast to each
/// parameter's dtype (bf16 or fp16 files load into fp32 parameters). Strict, as transformers'
/// from_pretrained is with no key left over: throws FormatError naming the key for a parameter
/// the folder lacks, a tensor the module has no parameter for (except names in `ignored`), or
/// a shape mismatch.
void load_hf_weights(torch::nn::Module& module, const std::string& folder,
                     const std::vector<std::string>& ignored = {});

/// load_hf_weights(), returning the dtypes the folder stores (every tensor read, `ignored` ones
/// included), so that a policy can say what it trains and saves instead.
StoredDtypes load_hf_weights_with_dtypes(torch::nn::Module& module, const std::string& folder,
                                         const std::vector<std::string>& ignored = {});

/// Names, sorted, of the tokenizer files directly inside `folder`, which a complete model folder
/// carries beside the weights: every file transformers' tokenizers save or read there
/// (tokenizer.json, tokenizer_config.json, special_tokens_map.json, added_tokens.json,
/// chat_template.jinja, chat_template.json, tokenizer.model*, vocab.*, merges.txt, sentencepiece
/// models `*.model`, `*.spm`, `*.tiktoken`, tekken.json), any other `*.jinja` template, and
/// generation_config.json. Weights, config.json and everything else are left out, as are
/// sub-folders (is_tokenizer_file() says which names count).
std::vector<std::string> hf_tokenizer_files(const std::string& folder);

/// Whether a file named `name` (no folder) is one hf_tokenizer_files() lists.
bool is_tokenizer_file(const std::string& name);

/// The message for --policy.path=`folder`, a Hugging Face folder whose config.json says
/// "model_type": `model_type` when no policy plugin of that name is loaded: it names the model
/// types shardkit supports, `supported_types` (the loaded policies that read such folders), and
/// what a user can do.
std::string unsupported_hf_model_message(const std::string& folder, const std::string& model_type,
                                         const std::vector<std::string>& supported_types);

}  // namespace shardkit
