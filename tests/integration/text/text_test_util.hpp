// Helpers for the text dataset tests: the plugin loaded as shardkit-train loads it, data files, Python's expectations.
#pragma once

#include <ATen/ATen.h>

#include <boost/json.hpp>
#include <spdlog/logger.h>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "shardkit/config.hpp"
#include "shardkit/dataset.hpp"
#include "shardkit/error.hpp"
#include "shardkit/loader.hpp"
#include "shardkit/runtime.hpp"
#include "plugin_defaults.hpp"
#include "test_support.hpp"
#include "../../unit/tokenizer/tokenizer_test_util.hpp"

namespace shardkit::test {

/// Tokenizers made by Python `tokenizers` on a 2,000-line corpus: <dir>/llama3 (adds
/// <|begin_of_text|>) and <dir>/gpt2 (adds nothing).
inline const std::string& text_tokenizers() {
  static const std::string dir = made_tokenizers(2000);
  return dir;
}

/// The text dataset plugin with `options` (keys without "dataset.") over its defaults.
inline std::shared_ptr<Dataset> open_text(const std::map<std::string, Value>& options,
                                          const Config* full_config = nullptr, const Runtime* runtime = nullptr,
                                          std::shared_ptr<spdlog::logger> logger = nullptr) {
  static Registry registry;
  static const bool loaded = (registry.load_file(std::string(SHARDKIT_PLUGIN_DIR) + "/libshardkit-dataset-text.so"), true);
  (void)loaded;
  PluginContext ctx;
  set_option_defaults(*registry.get("dataset", "text").descriptor, ctx.options);
  for (const auto& [key, value] : options) ctx.options.set(key, value);
  ctx.full_config = full_config;
  ctx.runtime = runtime;
  ctx.logger = std::move(logger);
  return registry.create_as<Dataset>("dataset", "text", ctx);
}

/// The message of the error opening the dataset with `options` ("" when none).
inline std::string text_error(const std::map<std::string, Value>& options, const Config* full_config = nullptr) {
  try {
    open_text(options, full_config);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// Writes `content` to `path`.
inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

/// Python's samples (expected_samples.py) for one data file, as [N, T] int64 tensors.
struct Expected {
  at::Tensor input_ids, attention_mask, labels;
};

inline Expected python_samples(const std::string& tokenizer_dir, const std::string& file, const std::string& column,
                               std::int64_t seq_len, bool packing, const TempDir& dir) {
  const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/text/expected_samples.py";
  const auto out = dir / "expected.json";
  const auto r = run_command(python() + " " + shell_quote(script) + " " + shell_quote(tokenizer_dir) + " " +
                             shell_quote(file) + " " + shell_quote(column) + " " + std::to_string(seq_len) + " " +
                             (packing ? "1 " : "0 ") + shell_quote(out));
  if (r.exit_code != 0) throw std::runtime_error("expected_samples.py failed:\n" + r.output);
  const auto root = boost::json::parse(slurp(out)).as_object();
  const auto tensor = [&](const char* key) {
    std::vector<std::int64_t> values;
    std::int64_t rows = 0;
    for (const auto& row : root.at(key).as_array()) {
      ++rows;
      for (const auto& v : row.as_array()) values.push_back(v.to_number<std::int64_t>());
    }
    return at::tensor(values, at::kLong).reshape({rows, seq_len});
  };
  return {tensor("input_ids"), tensor("attention_mask"), tensor("labels")};
}

/// Every sample of `dataset`, in order.
inline Batch all_samples(const Dataset& dataset) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(dataset.size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  return dataset.get_batch(all);
}

}  // namespace shardkit::test
