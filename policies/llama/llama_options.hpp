// The options of the Llama-layout policies: transformers' config field names of each family,
// given as --policy.<name>, with tiny defaults.
#pragma once

#include <shardkit/options.hpp>

namespace shardkit::llama {

// The options every family has (Llama's layout); each table below adds its family's own.
// With --policy.path=<a Hugging Face folder>, its config.json fills them (a null there is the default).
// The upper bounds are far above any real model's and below what would overflow a size computed
// from them: a config.json cannot ask for 10^15 layers before a single tensor exists.
#define SHARDKIT_LLAMA_LAYOUT_OPTIONS \
    {"vocab_size", OptionType::Int, "256", "Vocabulary size (rows of embed_tokens and lm_head)", "1", "16777216", nullptr},\
    {"hidden_size", OptionType::Int, "64", "Width of the residual stream", "1", "1048576", nullptr},\
    {"intermediate_size", OptionType::Int, "176", "Width of the SwiGLU MLP", "1", "4194304", nullptr},\
    {"num_hidden_layers", OptionType::Int, "2", "Decoder layers (the wrap units)", "1", "4096", nullptr},\
    {"num_attention_heads", OptionType::Int, "4", "Query heads", "1", "65536", nullptr},\
    {"num_key_value_heads", OptionType::Int, "0", "Key/value heads of grouped-query attention (divides "\
     "num_attention_heads; 0 = num_attention_heads)", "0", "65536", nullptr},\
    {"head_dim", OptionType::Int, "0", "Width of each head (0 = hidden_size / num_attention_heads; for qwen3 128, "\
     "as Qwen3Config)", "0", "65536", nullptr},\
    {"hidden_act", OptionType::String, "silu", "MLP activation (Llama's is silu)", nullptr, nullptr, "silu"},\
    {"max_position_embeddings", OptionType::Int, "2048", "Longest sequence the model is meant for (longer samples "\
     "are refused at start-up)", "1", "1073741824", nullptr},\
    {"initializer_range", OptionType::Float, "0.02", "Std-dev of the normal initialisation of linear and embedding "\
     "weights (without --policy.path)", "0", nullptr, nullptr},\
    {"rms_norm_eps", OptionType::Float, "1e-6", "Epsilon of RMSNorm", "0", nullptr, nullptr},\
    {"rope_theta", OptionType::Float, "10000.0", "Base of the rotary embedding frequencies", "0", nullptr, nullptr},\
    {"rope_scaling", OptionType::String, "null", "null, or Llama 3's rope scaling as JSON: {\"rope_type\": \"llama3\", "\
     "\"factor\": 8.0, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}",\
     nullptr, nullptr, nullptr},\
    {"rope_parameters", OptionType::String, "null", "transformers 5's form of rope_theta and rope_scaling together "\
     "(JSON with rope_type and rope_theta); when given it wins over both", nullptr, nullptr, nullptr},\
    {"attention_dropout", OptionType::Float, "0.0", "Dropout on the attention probabilities in training", "0", "1",\
     nullptr},\
    {"tie_word_embeddings", OptionType::Bool, "false", "lm_head reuses embed_tokens.weight (no lm_head.weight saved)",\
     nullptr, nullptr, nullptr},\
    {"bos_token_id", OptionType::String, "null", "Beginning-of-sequence token id (JSON: null, an id or a list of ids; "\
     "recorded in config.json)", nullptr, nullptr, nullptr},\
    {"eos_token_id", OptionType::String, "null", "End-of-sequence token id(s) (JSON: null, an id or a list of ids)",\
     nullptr, nullptr, nullptr},\
    {"pad_token_id", OptionType::String, "null", "Padding token id (JSON: null or an id)", nullptr, nullptr, nullptr}

/// Llama (LlamaConfig).
inline constexpr OptionSpec kLlamaOptions[] = {
    SHARDKIT_LLAMA_LAYOUT_OPTIONS,
    {"attention_bias", OptionType::Bool, "false", "Biases in q_proj, k_proj, v_proj and o_proj", nullptr, nullptr, nullptr},
    {"mlp_bias", OptionType::Bool, "false", "Biases in gate_proj, up_proj and down_proj", nullptr, nullptr, nullptr},
    {"pretraining_tp", OptionType::Int, "1", "Tensor-parallel degree of pretraining (recorded; only 1 is computed)", "1",
     "1", nullptr},
};

/// Mistral (MistralConfig): Llama's layout with a sliding attention window.
inline constexpr OptionSpec kMistralOptions[] = {
    SHARDKIT_LLAMA_LAYOUT_OPTIONS,
    {"sliding_window", OptionType::Int, "0", "Keys each query attends to, counting itself, in every layer (0 = no "
     "window: config.json's null)", "0", nullptr, nullptr},
};

// Qwen2's and Qwen3's sliding-window fields.
#define SHARDKIT_QWEN_WINDOW_OPTIONS \
    {"use_sliding_window", OptionType::Bool, "false", "Whether layers attend within sliding_window (which ones: "\
     "layer_types, else those from max_window_layers on)", nullptr, nullptr, nullptr}, \
    {"sliding_window", OptionType::Int, "4096", "Keys a query of a sliding layer attends to, counting itself", "1", \
     nullptr, nullptr}, \
    {"max_window_layers", OptionType::Int, "28", "Layers from this index on slide, when use_sliding_window and no "\
     "layer_types", "0", nullptr, nullptr}, \
    {"layer_types", OptionType::String, "null", "null, or a JSON list with \"full_attention\" or "\
     "\"sliding_attention\" per layer", nullptr, nullptr, nullptr}

/// Qwen2 (Qwen2Config): biases on q_proj, k_proj and v_proj, not o_proj.
inline constexpr OptionSpec kQwen2Options[] = {
    SHARDKIT_LLAMA_LAYOUT_OPTIONS,
    SHARDKIT_QWEN_WINDOW_OPTIONS,
};

/// Qwen3 (Qwen3Config): q_norm and k_norm on each head; attention_bias on all four projections.
inline constexpr OptionSpec kQwen3Options[] = {
    SHARDKIT_LLAMA_LAYOUT_OPTIONS,
    SHARDKIT_QWEN_WINDOW_OPTIONS,
    {"attention_bias", OptionType::Bool, "false", "Biases in q_proj, k_proj, v_proj and o_proj", nullptr, nullptr,
     nullptr},
};

#undef SHARDKIT_QWEN_WINDOW_OPTIONS
#undef SHARDKIT_LLAMA_LAYOUT_OPTIONS

}  // namespace shardkit::llama
