// Hugging Face model folders: which files are the tokenizer's, and the message for a model type shardkit lacks.
#include "shardkit/hf_folder.hpp"  // LibTorch's headers first: then CHECK is Catch's
#undef CHECK

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "test_support.hpp"

using namespace shardkit::test;

namespace {

void touch(const std::string& path) { std::ofstream(path) << "x"; }

}  // namespace

TEST_CASE("every tokenizer file transformers saves is listed, chat_template.jinja included", "[state][hf_folder]") {
  TempDir dir("sk-hf-folder");
  // What transformers 5's tokenizers save (tokenization_utils_base.py and the models'
  // vocab_files_names), a Mistral tokenizer, and a template beside them.
  const std::vector<std::string> tokenizer = {
      "added_tokens.json", "chat_template.jinja", "chat_template.json", "generation_config.json", "merges.txt",
      "sentencepiece.bpe.model", "special_tokens_map.json", "spiece.model", "tekken.json", "tokenizer.json",
      "tokenizer.model", "tokenizer.model.v3", "tokenizer_config.json", "tool_use.jinja", "vocab.json", "vocab.txt"};
  // The weights, the model's config and what else a model folder may hold.
  for (const auto* other : {"config.json", "model.safetensors", "model-00001-of-00002.safetensors",
                            "model.safetensors.index.json", "pytorch_model.bin", "README.md", "adapter_config.json",
                            "adapter_model.safetensors", "train_config.json", "preprocessor_config.json",
                            ".chat_template.jinja.swp", ".hidden.jinja"})
    touch(dir / other);
  for (const auto& name : tokenizer) touch(dir / name);
  std::filesystem::create_directory(dir / "additional_chat_templates");
  touch(dir / "additional_chat_templates/rag.jinja");
  std::filesystem::create_directory(dir / "vocab.d");  // a folder is never a file to copy

  CHECK(shardkit::hf_tokenizer_files(dir.path()) == tokenizer);  // sorted by name
  CHECK(shardkit::is_tokenizer_file("chat_template.jinja"));
  CHECK_FALSE(shardkit::is_tokenizer_file("config.json"));
  CHECK_FALSE(shardkit::is_tokenizer_file("model.safetensors"));
  CHECK(shardkit::hf_tokenizer_files(dir / "missing").empty());
}

TEST_CASE("a model type without a policy is named with the model types shardkit supports", "[state][hf_folder]") {
  for (const auto* type : {"qwen2", "mistral"}) {
    const auto message = shardkit::unsupported_hf_model_message("/models/x", type, {"llama"});
    INFO(message);
    CHECK(contains(message, "--policy.path=/models/x"));
    CHECK(contains(message, std::string("'") + type + "' model"));
    CHECK(contains(message, "the Hugging Face model types it supports are 'llama'"));
    CHECK_FALSE(contains(message, "load its plugin"));
  }
  const auto none = shardkit::unsupported_hf_model_message("/models/x", "qwen2", {});
  CHECK(contains(none, "the Hugging Face model types it supports are none (no loaded policy reads such a folder)"));
  const auto two = shardkit::unsupported_hf_model_message("/models/x", "qwen2", {"llama", "mistral"});
  CHECK(contains(two, "the Hugging Face model types it supports are 'llama', 'mistral'"));
}
