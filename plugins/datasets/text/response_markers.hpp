// Assistant-only loss for chat templates without {% generation %} blocks: the response markers
// AITraining looks for (Gemma, Llama 3, ChatML, [/INST], <|assistant|>), matched on token ids.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardkit::chat {
class ChatTemplate;
}

namespace shardkit::text {

class Tokenizer;

/// Where an assistant's answer starts and its turn ends, as token ids.
struct ResponseMarkers {
  std::string marker;    ///< e.g. "<|im_start|>assistant\n"
  std::string end_turn;  ///< e.g. "<|im_end|>"; "" when the template ends turns with nothing known
  std::vector<std::uint32_t> marker_ids;    ///< the marker without its trailing newlines and spaces
  std::vector<std::uint32_t> newline_ids;   ///< tokens of "\n", "\n\n", "\n\n\n" (single-token ones)
  std::vector<std::uint32_t> end_turn_ids;  ///< empty when end_turn is ""
};

/// The markers of `tmpl`, found as AITraining finds them: the template renders a user "test" and
/// an assistant "response" turn, and the first of <start_of_turn>model\n, <|start_header_id|>
/// assistant<|end_header_id|>\n\n (or \n), <|im_start|>assistant\n, "[/INST] ", <|assistant|>\n
/// present is the marker. The end of a turn is the first of <end_of_turn>, <|eot_id|>, <|im_end|>,
/// <|end|> the template uses, else the eos token when it follows the response (not AITraining's
/// [/INST], which would run a Mistral answer into the next question). nullopt when no marker is there.
std::optional<ResponseMarkers> find_response_markers(const chat::ChatTemplate& tmpl,
                                                     const std::map<std::string, std::string>& special_tokens,
                                                     const Tokenizer& tokenizer);

/// Sets trained[i] = 1 for every answer in `ids`: from after each marker and the newline tokens
/// that follow it, through the end-of-turn tokens inclusive (to the end of `ids` when the turn
/// never ends). `trained` has ids.size() entries, 0 elsewhere.
void mark_responses(const ResponseMarkers& markers, const std::vector<std::uint32_t>& ids,
                    std::vector<std::uint8_t>& trained);

}  // namespace shardkit::text
