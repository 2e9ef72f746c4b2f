// Policy `qwen3`: the Llama-layout policy for transformers' Qwen3 family (llama_policy.hpp).
#include "llama_options.hpp"
#include "llama_policy.hpp"

namespace {

std::shared_ptr<shardkit::Plugin> make(const shardkit::PluginContext& ctx) {
  return shardkit::llama::make_policy(ctx, shardkit::llama::Family::Qwen3);
}

}  // namespace

SHARDKIT_PLUGIN_CLASS(policy, qwen3, "0.1.0",
                      "Qwen3 decoder as transformers' Qwen3ForCausalLM (q_norm/k_norm on each head)",
                      shardkit::llama::kQwen3Options, make, 0u, shardkit::llama::LlamaPolicy)
