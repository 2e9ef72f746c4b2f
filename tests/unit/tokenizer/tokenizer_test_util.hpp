// Helpers for the tokenizer tests: the data Python `tokenizers` made, read back.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace shardkit::test {

/// Runs make_tokenizers.py once per process into a temporary folder and returns it.
inline const std::string& tokenizer_data() {
  static TempDir dir("shardkit-tokenizer");
  static const std::string ready = [] {
    const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/unit/tokenizer/make_tokenizers.py";
    const auto r = run_command(python() + " " + shell_quote(script) + " " + shell_quote(dir.path()) + " 12000");
    if (r.exit_code != 0)
      throw std::runtime_error("make_tokenizers.py failed (Python `tokenizers` is a required peer):\n" + r.output);
    return dir.path();
  }();
  return ready;
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
