// The EMA entries of a sharded state, renamed to load or save as a model.
#include "shardkit/ema_entries.hpp"

namespace shardkit {

ShardedState renamed_entries(const ShardedState& state, const std::string& from, const std::string& to) {
  ShardedState out;
  out.model_is_adapter = state.model_is_adapter;
  for (const auto& key : state.keys_with_prefix(from))
    out.tensors.emplace(to + key.substr(from.size()), state.tensors.at(key));
  return out;
}

}  // namespace shardkit
