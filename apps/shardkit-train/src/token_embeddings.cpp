// Token embeddings grown to the dataset's tokenizer; the tokenizer files of each checkpoint.
#include "token_embeddings.hpp"

#include <spdlog/logger.h>

#include "shardkit/capability.hpp"
#include "shardkit/error.hpp"
#include "shardkit/hf_folder.hpp"
#include "shardkit/pretrained_files.hpp"
#include "shardkit/token_embeddings.hpp"

namespace shardkit::train {

void match_token_embeddings(const Dataset& dataset, Policy& policy, const std::string& policy_name,
                            spdlog::logger* log) {
  const auto* tokens = capability<DatasetTokenizer>(dataset);
  if (!tokens) return;
  auto* embeddings = capability<ResizableTokenEmbeddings>(policy);
  const auto count = tokens->token_count();
  if (!embeddings) {
    if (!tokens->tokenizer_files().empty())
      throw ConfigError(tokens->tokenizer_change() + ", and policy '" + policy_name +
                        "' cannot grow its token embeddings to " + std::to_string(count) +
                        " tokens: use --dataset.chat_template=tokenizer or a template file");
    return;
  }
  const auto had = embeddings->token_embedding_count();
  if (count <= had) return;
  embeddings->resize_token_embeddings(count);
  if (log)
    log->info("token embeddings: the tokenizer has {} tokens and the model embedded {}: grown to {} (as AITraining's "
              "resize_token_embeddings(len(tokenizer))), each new row the mean of the old rows; config.json's "
              "vocab_size follows", count, had, count);
}

std::map<std::string, std::string> pretrained_model_files(const Policy& policy, const Dataset* dataset) {
  std::map<std::string, std::string> files;
  if (const auto* writer = capability<PretrainedFilesWriter>(policy)) files = writer->pretrained_files();
  const auto* tokens = dataset ? capability<DatasetTokenizer>(*dataset) : nullptr;
  if (!tokens) return files;
  auto changed = tokens->tokenizer_files();
  if (changed.empty()) return files;
  // The model folder's tokenizer gives way whole (its special_tokens_map.json, vocab files, ...).
  for (auto it = files.begin(); it != files.end();)
    it = is_tokenizer_file(it->first) && it->first != "generation_config.json" ? files.erase(it) : std::next(it);
  files.merge(changed);
  return files;
}

}  // namespace shardkit::train
