// The preview: the dataset made as the run would make it, asked for its examples.
#include "dataset_preview.hpp"

#include <iostream>

#include "shardkit/capability.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/dataset_preview.hpp"
#include "train_options.hpp"

namespace shardkit::train {

std::optional<int> preview_dataset(const RunPlan& plan, const Runtime& runtime) {
  const auto& name = plan.selection.dataset;
  const bool offered = plan.registry->get("dataset", name).lists_capability(DatasetPreview::kCapabilityName);
  const auto key = "dataset." + std::string(DatasetPreview::kOption);
  if (!offered || !plan.config.has(key) || plan.config.get_int(key) <= 0) return std::nullopt;
  const auto dataset = plan.registry->create_as<Dataset>("dataset", name, plugin_context(plan.config, runtime, "dataset", name));
  const auto* preview = capability<DatasetPreview>(*dataset);
  if (!preview) return std::nullopt;
  if (runtime.is_main()) {
    preview->write_preview(std::cout);
    std::cout << std::flush;
  }
  return 0;
}

}  // namespace shardkit::train
