// An optional capability of a Dataset: showing what the model will learn, without training.
//
// A dataset that offers it declares an Int option named DatasetPreview::kOption ("preview").
// When a run sets it above 0 (--dataset.preview=3), shardkit-train creates the dataset, writes
// its preview to stdout on the main rank and exits 0: no run folder, no training.
//
//   if (const auto* p = shardkit::capability<shardkit::DatasetPreview>(*dataset))
//     p->write_preview(std::cout);
#pragma once

#include <cstdint>
#include <iosfwd>

namespace shardkit {

class DatasetPreview {
 public:
  static constexpr const char* kCapabilityName = "dataset_preview";
  static constexpr std::uint32_t kCapabilityVersion = 1;
  /// The dataset option (an Int, 0 = off) that asks for a preview of that many examples.
  static constexpr const char* kOption = "preview";
  virtual ~DatasetPreview();
  /// Writes the examples the option asked for, one JSON object per line.
  virtual void write_preview(std::ostream& out) const = 0;
};

}  // namespace shardkit
