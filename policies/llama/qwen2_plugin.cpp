// Policy `qwen2`: the Llama-layout policy for transformers' Qwen2 family (llama_policy.hpp).
#include "llama_options.hpp"
#include "llama_policy.hpp"

namespace {

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return shardkit::llama::make_policy(ctx, shardkit::llama::Family::Qwen2);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, qwen2, "0.1.0",
                      "Qwen2 decoder as transformers' Qwen2ForCausalLM (q/k/v biases)",
                      shardkit::llama::kQwen2Options, make, 0u, shardkit::llama::LlamaPolicy)
