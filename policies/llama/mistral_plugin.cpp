// Policy `mistral`: the Llama-layout policy for transformers' Mistral family (llama_policy.hpp).
#include "llama_options.hpp"
#include "llama_policy.hpp"

namespace {

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return shardkit::llama::make_policy(ctx, shardkit::llama::Family::Mistral);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, mistral, "0.1.0",
                      "Mistral decoder as transformers' MistralForCausalLM (Llama's layout with a sliding attention window)",
                      shardkit::llama::kMistralOptions, make, 0u, shardkit::llama::LlamaPolicy)
