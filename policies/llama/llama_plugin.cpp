// Policy `llama`: the Llama-layout policy for transformers' Llama family (llama_policy.hpp).
#include "llama_options.hpp"
#include "llama_policy.hpp"

namespace {

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return shardkit::llama::make_policy(ctx, shardkit::llama::Family::Llama);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, llama, "0.1.0",
                      "Llama decoder as transformers' LlamaForCausalLM (causal LM on input_ids)",
                      shardkit::llama::kLlamaOptions, make, 0u, shardkit::llama::LlamaPolicy)
