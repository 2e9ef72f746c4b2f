// Hugging Face model folders: config.json plus model.safetensors or sharded safetensors files.
//
// A folder transformers' save_pretrained() writes holds config.json (with "model_type"),
// either model.safetensors or model-0000k-of-0000n.safetensors with model.safetensors.index.json
// (its "weight_map" names the file of every tensor), and often the tokenizer's files. A policy
// that starts from such a folder (--policy.path) reads its weights with load_hf_weights() and
// says so through PretrainedWeightsLoader, so the trainer does not look for a checkpoint.
#pragma once

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

/// Copies the folder's weights into `module`'s parameters of the same names, cast to each
/// parameter's dtype (bf16 or fp16 files load into fp32 parameters). Strict, as transformers'
/// from_pretrained is with no key left over: throws FormatError naming the key for a parameter
/// the folder lacks, a tensor the module has no parameter for (except names in `ignored`), or
/// a shape mismatch.
void load_hf_weights(torch::nn::Module& module, const std::string& folder,
                     const std::vector<std::string>& ignored = {});

/// Names of the tokenizer files present in `folder` (tokenizer.json, tokenizer_config.json,
/// special_tokens_map.json, tokenizer.model, generation_config.json), which a complete model
/// folder carries beside the weights.
std::vector<std::string> hf_tokenizer_files(const std::string& folder);

}  // namespace shardkit
