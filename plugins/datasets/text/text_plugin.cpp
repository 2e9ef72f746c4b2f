// Plugin entry of the `text` dataset: its options and factory.
#include "shardkit/plugin.hpp"
#include "text_dataset.hpp"

namespace {

using shardkit::OptionType;

const shardkit::OptionSpec kOptions[] = {
    {"path", OptionType::String, "", "A .jsonl, .csv or .txt file, or a folder of them", nullptr, nullptr, nullptr},
    {"text_column", OptionType::String, "text", "The field (.jsonl) or column (.csv) holding the text", nullptr, nullptr,
     nullptr},
    {"sample_by", OptionType::String, "line", "How a .txt file is cut into documents", nullptr, nullptr,
     "line|paragraph|document"},
    {"tokenizer", OptionType::String, "",
     "tokenizer.json, or a folder holding one (default: --policy.path)", nullptr, nullptr, nullptr},
    {"max_seq_len", OptionType::Int, "512", "Tokens per sample", "2", nullptr, nullptr},
    {"packing", OptionType::Bool, "true",
     "Concatenate documents (each ended by EOS) into max_seq_len blocks; false: one padded document per sample",
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

SHARDKIT_PLUGIN(dataset, text, "0.1.0",
                "Text files (.jsonl, .csv, .txt) tokenized with a Hugging Face tokenizer.json (byte-level BPE)",
                kOptions, make)
