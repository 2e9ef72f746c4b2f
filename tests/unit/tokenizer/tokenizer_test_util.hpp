// Helpers for the tokenizer tests: the data Python `tokenizers` made, read back.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace shardkit::test {

/// Runs make_tokenizers.py (corpus of `lines` lines) once per process and `lines`, into a
/// temporary folder, and returns the folder: <dir>/corpus.bin, <dir>/{gpt2,llama3,gpt2_prefix}.
inline std::string made_tokenizers(int lines) {
  static std::map<int, std::unique_ptr<TempDir>> made;
  auto& dir = made[lines];
  if (!dir) {
    auto fresh = std::make_unique<TempDir>("shardkit-tokenizer");
    const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/unit/tokenizer/make_tokenizers.py";
    const auto r = run_command(python() + " " + shell_quote(script) + " " + shell_quote(fresh->path()) + " " +
                               std::to_string(lines));
    if (r.exit_code != 0)
      throw std::runtime_error("make_tokenizers.py failed (Python `tokenizers` is a required peer):\n" + r.output);
    dir = std::move(fresh);
  }
  return dir->path();
}

/// The tokenizer unit tests' data: 12,000 corpus lines.
inline const std::string& tokenizer_data() {
  static const std::string dir = made_tokenizers(12000);
  return dir;
}

/// Records "<length>\n<bytes>\n" as make_tokenizers.py writes them.
inline std::vector<std::string> read_records(const std::string& path) {
  const auto data = slurp(path);
  std::vector<std::string> out;
  for (std::size_t at = 0; at < data.size();) {
    const auto nl = data.find('\n', at);
    const auto n = std::stoull(data.substr(at, nl - at));
    out.push_back(data.substr(nl + 1, n));
    at = nl + 1 + n + 1;
  }
  return out;
}

/// One line of ids per record.
inline std::vector<std::vector<std::uint32_t>> read_ids(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::uint32_t>> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    auto& ids = out.emplace_back();
    for (std::uint32_t id; s >> id;) ids.push_back(id);
  }
  return out;
}

}  // namespace shardkit::test
