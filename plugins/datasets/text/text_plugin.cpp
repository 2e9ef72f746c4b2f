// Plugin entry of the `text` dataset: its options and factory.
#include "shardkit/plugin.hpp"
#include "text_dataset.hpp"

namespace {

using shardkit::OptionType;

const shardkit::OptionSpec kOptions[] = {
    {"path", OptionType::String, "", "A .jsonl, .csv, .parquet or .txt file, or a folder of them", nullptr, nullptr, nullptr},
    {"text_column", OptionType::String, "text",
     "The field (.jsonl) or column (.csv) holding the text (a 'messages' field or column, a conversation, wins)",
     nullptr, nullptr, nullptr},
    {"chat_template", OptionType::String, "tokenizer",
     "How conversations are rendered: tokenizer (the tokenizer's own template), chatml, zephyr (AITraining's), a "
     ".jinja file, or none (plain text only)", nullptr, nullptr, nullptr},
    {"response_only_loss", OptionType::Bool, "true",
     "Conversations: train on the assistant's tokens only ({% generation %} blocks, else response markers)", nullptr,
     nullptr, nullptr},
    {"on_bad_example", OptionType::String, "error",
     "A conversation that cannot be rendered stops the run (error) or is left out and counted (skip)", nullptr, nullptr,
     "error|skip"},
    {"preview", OptionType::Int, "0",
     "Print the first N examples as JSON lines (text, input_ids, labels) and exit without training", "0", nullptr,
     nullptr},
    {"sample_by", OptionType::String, "line", "How a .txt file is cut into documents", nullptr, nullptr,
     "line|paragraph|document"},
    {"tokenizer", OptionType::String, "",
     "tokenizer.json, or a folder holding one (default: --policy.path)", nullptr, nullptr, nullptr},
    {"max_seq_len", OptionType::Int, "512", "Tokens per sample", "2", nullptr, nullptr},
    {"packing", OptionType::Bool, "",
     "Concatenate documents (each ended by EOS) into max_seq_len blocks; false: one padded document per sample "
     "(default: true for plain text, false for conversations, as AITraining)",
     nullptr, nullptr, nullptr},
    {"split", OptionType::String, "train", "Which split to read", nullptr, nullptr, "train|validation"},
    {"validation_fraction", OptionType::Float, "0", "Fraction of the documents (the last ones) kept for validation",
     "0", "0.99", nullptr},
    {"validation_path", OptionType::String, "", "Validation data instead of a fraction of --dataset.path", nullptr,
     nullptr, nullptr},
    {"cache_dir", OptionType::String, "",
     "Where tokenized data is cached (default: $XDG_CACHE_HOME/shardkit/tokenized)", nullptr, nullptr, nullptr},
    {"num_threads", OptionType::Int, "0", "Tokenizing threads (0: the cores shared among the node's ranks)", "0",
     nullptr, nullptr},
};

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return std::make_shared<shardkit::text::TextDataset>(ctx);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(dataset, text, "0.1.0",
                      "Text files and conversations (.jsonl, .csv, .parquet, .txt) tokenized with a Hugging Face tokenizer.json "
                      "(byte-level BPE) and rendered with its chat template",
                      kOptions, make, 0u, shardkit::text::TextDataset)
