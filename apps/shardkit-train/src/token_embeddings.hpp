// The policy's token embeddings kept in step with the dataset's tokenizer (AITraining's
// resize_token_embeddings(len(tokenizer))), and the tokenizer files each checkpoint carries.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "shardkit/dataset.hpp"
#include "shardkit/policy.hpp"

namespace spdlog {
class logger;
}

namespace shardkit::train {

/// Grows the policy's token embeddings to the dataset's token count when the tokenizer has more
/// ids than the model embeds (as AITraining; a smaller tokenizer leaves the model as it is).
/// Call before PEFT and before the backend lays the model out. ConfigError, naming both, when
/// the policy cannot grow them. `log` (rank 0's, or null) says what was done.
void match_token_embeddings(const Dataset& dataset, Policy& policy, const std::string& policy_name,
                            spdlog::logger* log);

/// The files pretrained_model/ holds besides config.json and the weights: the policy's, with the
/// dataset's tokenizer (when it changed it) in place of the policy's tokenizer files.
std::map<std::string, std::string> pretrained_model_files(const Policy& policy, const Dataset* dataset);

}  // namespace shardkit::train
