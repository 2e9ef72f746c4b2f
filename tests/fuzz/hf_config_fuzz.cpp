// Fuzz target for the Hugging Face files --policy.path reads: a model folder's config.json (its
// fields become the policy's options, checked against the Llama-layout family that model_type
// names, then read as LlamaConfig) and a PEFT adapter folder's adapter_config.json (its base and
// LoRA options). No file crashes the readers or escapes as anything but shardkit's errors, and a
// model config they accept is written back as checkpoints write it and read the same.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan); the test suite replays the
// committed corpus through the same function. Every input is both files, in folders under the
// process's temporary folder.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "adapter_start.hpp"
#include "hf_config_json.hpp"
#include "llama_config.hpp"
#include "llama_options.hpp"
#include "saved_policy_config.hpp"
#include "shardkit/config.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/error.hpp"
#include "refuse_or_abort.hpp"
#include "temp_folder.hpp"

namespace {

using namespace shardkit;
using llama::Family;
using llama::LlamaConfig;

struct FamilyOptions {
  const char* model_type;
  Family family;
  const OptionSpec* options;
  std::size_t count;
};
const FamilyOptions kFamilies[] = {
    {"llama", Family::Llama, llama::kLlamaOptions, std::size(llama::kLlamaOptions)},
    {"mistral", Family::Mistral, llama::kMistralOptions, std::size(llama::kMistralOptions)},
    {"qwen2", Family::Qwen2, llama::kQwen2Options, std::size(llama::kQwen2Options)},
    {"qwen3", Family::Qwen3, llama::kQwen3Options, std::size(llama::kQwen3Options)},
};

struct ReadModel {
  LlamaConfig config;
  Config options;  ///< the policy's options (without "policy.")
};

/// The config.json at `path` as shardkit-train takes it for --policy.path (run_builder's
/// read_layers: every field a policy option of the file layer, "device" left out), resolved
/// against the options of the family its model_type names and read as LlamaConfig; nullopt for
/// a model_type no Llama-layout policy loads.
std::optional<ReadModel> read_model_config(const std::string& path) {
  RawConfig file;
  for (auto& [key, value] : train::read_saved_policy_config(path))
    if (key != "device") file.emplace("policy." + key, std::move(value));
  const auto type = file.count("policy.type") ? to_string(file.at("policy.type").value) : std::string();
  for (const auto& f : kFamilies) {
    if (type != f.model_type) continue;
    Schema schema;
    schema.add("policy.", f.options, f.count, "policy '" + type + "'");
    schema.allow_extra("policy.type");
    auto resolution = resolve_all(schema, file, {});
    throw_config_errors(resolution.errors);
    auto options = resolution.config.section("policy.");
    auto config = llama::read_config(options, f.family);
    return ReadModel{std::move(config), std::move(options)};
  }
  return std::nullopt;
}

bool same(const LlamaConfig& a, const LlamaConfig& b) {
  return a.family == b.family && a.vocab_size == b.vocab_size && a.hidden_size == b.hidden_size &&
         a.intermediate_size == b.intermediate_size && a.num_hidden_layers == b.num_hidden_layers &&
         a.num_attention_heads == b.num_attention_heads && a.num_key_value_heads == b.num_key_value_heads &&
         a.head_dim == b.head_dim && a.max_position_embeddings == b.max_position_embeddings &&
         a.initializer_range == b.initializer_range && a.rms_norm_eps == b.rms_norm_eps &&
         a.attention_dropout == b.attention_dropout && a.rope.theta == b.rope.theta && a.rope.llama3 == b.rope.llama3 &&
         (!a.rope.llama3 || (a.rope.factor == b.rope.factor && a.rope.low_freq_factor == b.rope.low_freq_factor &&
                             a.rope.high_freq_factor == b.rope.high_freq_factor &&
                             a.rope.original_max_position_embeddings == b.rope.original_max_position_embeddings)) &&
         a.attention_bias == b.attention_bias && a.mlp_bias == b.mlp_bias &&
         a.tie_word_embeddings == b.tie_word_embeddings && a.qkv_bias == b.qkv_bias && a.qk_norm == b.qk_norm &&
         a.sliding_window == b.sliding_window && a.sliding_layers == b.sliding_layers &&
         a.use_sliding_window == b.use_sliding_window;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto model = fuzz::write_temp_file("model/config.json", bytes);
  const auto adapter = fuzz::write_temp_file("adapter/adapter_config.json", bytes);
  const auto model_dir = (fuzz::temp_folder() / "model").string();
  const auto adapter_dir = (fuzz::temp_folder() / "adapter").string();

  fuzz::refuse_or_abort("config.json", [&] {
    const auto read = read_model_config(model);
    if (!read) return;
    // What each checkpoint's pretrained_model/config.json holds, read back as a resume does.
    // Whatever read_config accepted, the writer must write (no refusal first at the first save).
    const auto written = llama::hf_config_json(read->config, read->options, "float32");
    const auto again = read_model_config(fuzz::write_temp_file("saved/config.json", written));
    if (!again || !same(again->config, read->config)) {
      std::fprintf(stderr, "config.json written back reads otherwise:\n%s", written.c_str());
      std::abort();
    }
  });

  // --policy.path=<adapter folder>: its base from base_model_name_or_path, then its LoRA options.
  fuzz::refuse_or_abort("adapter_config.json as --policy.path", [&] {
    RawConfig flags{{"policy.path", {adapter_dir, "--policy.path"}}}, file;
    (void)train::start_from_adapter(flags, file);
  });
  // --policy.path=<base> --peft.adapter_path=<adapter folder>: only its LoRA options.
  fuzz::refuse_or_abort("adapter_config.json as --peft.adapter_path", [&] {
    RawConfig flags{{"policy.path", {model_dir, "--policy.path"}},
                    {"peft.adapter_path", {adapter_dir, "--peft.adapter_path"}}};
    RawConfig file;
    (void)train::start_from_adapter(flags, file);
  });
  return 0;
}
