// Out-of-line destructors and defaults of the plugin interfaces (anchors their type_info in core).
#include "shardkit/backend.hpp"
#include "shardkit/causal_lm.hpp"
#include "shardkit/checkpoint_format.hpp"
#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/dataset_preview.hpp"
#include "shardkit/error.hpp"
#include "shardkit/lora_targets.hpp"
#include "shardkit/metrics_logger.hpp"
#include "shardkit/nn/lora_capable.hpp"
#include "shardkit/policy.hpp"
#include "shardkit/optimizer_preset.hpp"
#include "shardkit/pretrained_config.hpp"
#include "shardkit/pretrained_files.hpp"
#include "shardkit/sharding_report.hpp"
#include "shardkit/token_embeddings.hpp"

namespace shardkit {

Policy::~Policy() = default;
Dataset::~Dataset() = default;
DatasetPreview::~DatasetPreview() = default;
Backend::~Backend() = default;
CheckpointFormat::~CheckpointFormat() = default;
PretrainedConfigWriter::~PretrainedConfigWriter() = default;
PretrainedWeightsLoader::~PretrainedWeightsLoader() = default;
PretrainedFilesWriter::~PretrainedFilesWriter() = default;
CausalLanguageModel::~CausalLanguageModel() = default;
OptimizerPresetPolicy::~OptimizerPresetPolicy() = default;
ShardingReport::~ShardingReport() = default;
MetricsLogger::~MetricsLogger() = default;
LoraTargetsPolicy::~LoraTargetsPolicy() = default;
nn::LoraCapable::~LoraCapable() = default;
DatasetTokenizer::~DatasetTokenizer() = default;
ResizableTokenEmbeddings::~ResizableTokenEmbeddings() = default;

bool peft_enabled(const Config& config) {
  return config.has("peft.method_type") && !config.get_string("peft.method_type").empty();
}

std::string nn::LoraCapable::lora_target_hint(const std::string&, const std::string&) const { return {}; }

void MetricsLogger::finish() {}

DeltaIndices Policy::delta_indices() const { return {}; }

void Dataset::set_delta_indices(const DeltaIndices& deltas) {
  if (deltas.empty()) return;
  throw ConfigError("the policy reads feature '" + deltas.begin()->first +
                    "' at other frames than the current one, and this dataset has no frames in time; "
                    "train it on a --dataset.type whose samples are frames in time");
}

std::int64_t feature_numel(const PluginContext& ctx, const std::string& feature,
                           const std::string& policy) {
  const auto it = ctx.features.find(feature);
  if (it == ctx.features.end()) {
    std::string dataset = "the selected dataset", have;
    if (ctx.full_config && ctx.full_config->has("dataset.type"))
      dataset = "--dataset.type=" + ctx.full_config->get_string("dataset.type");
    for (const auto& [name, shape] : ctx.features) have += (have.empty() ? "" : ", ") + name;
    throw ConfigError("policy '" + policy + "' needs a dataset feature '" + feature + "', which " + dataset +
                      " does not provide (it has: " + (have.empty() ? "nothing" : have) +
                      "); pick a dataset that has it");
  }
  std::int64_t n = 1;
  for (const auto d : it->second) n *= d;
  return n;
}

}  // namespace shardkit
