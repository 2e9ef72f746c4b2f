// The write results rank 0 gathers (a line per chunk), planner_data paths and dtype names.
#include "folder_plan.hpp"

#include <cctype>
#include <sstream>

#include "shardkit/comm_support.hpp"
#include "shardkit/error.hpp"

namespace shardkit::dcp {
namespace {

constexpr char kField = '\x1f';  // never in a parameter name

std::string join(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

std::vector<std::int64_t> split_ints(const std::string& text) {
  std::vector<std::int64_t> values;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::stoll(item));
  return values;
}

}  // namespace

std::string encode_written(const std::vector<WrittenChunk>& chunks) {
  std::string text;
  for (const auto& c : chunks)
    text += c.fqn + kField + c.dtype + kField + join(c.global_shape) + kField + join(c.offsets) +
            kField + join(c.sizes) + kField + std::to_string(c.rank) + kField +
            std::to_string(c.file_offset) + kField + std::to_string(c.length) + kField +
            (c.bytes ? 'b' : 't') + '\n';
  return text;
}

std::vector<WrittenChunk> decode_written(const std::string& text) {
  std::vector<WrittenChunk> chunks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, kField)) f.push_back(field);
    if (f.size() != 9 || (f[8] != "b" && f[8] != "t"))
      throw FormatError("DCP save: a rank's write results are malformed: " + line);
    try {
      chunks.push_back({f[0], f[1], split_ints(f[2]), split_ints(f[3]), split_ints(f[4]),
                        std::stoi(f[5]), std::stoll(f[6]), std::stoll(f[7]), f[8] == "b"});
    } catch (const std::logic_error&) {
      throw FormatError("DCP save: a rank's write results are malformed: " + line);
    }
  }
  return chunks;
}

std::vector<PathComponent> planner_path(const std::string& fqn) {
  const auto first = fqn.find('.');
  if (first == std::string::npos) return {fqn};
  const auto head = fqn.substr(0, first), rest = fqn.substr(first + 1);
  if (head == "optimizer" && rest.rfind("state.", 0) == 0) {
    const auto slot = rest.rfind('.');
    if (slot > 6) return {head, std::string("state"), rest.substr(6, slot - 6), rest.substr(slot + 1)};
  }
  if (head == "optimizer" && rest.rfind("param_groups.", 0) == 0) {
    const auto index_end = rest.find('.', 13);
    const auto index = rest.substr(13, index_end - 13);
    if (index_end != std::string::npos && !index.empty() &&
        index.find_first_not_of("0123456789") == std::string::npos)
      return {head, std::string("param_groups"), static_cast<std::int64_t>(std::stoll(index)),
              rest.substr(index_end + 1)};
  }
  return {head, rest};
}

std::string dcp_dtype(c10::ScalarType dtype) {
  auto name = dtype_name(dtype);  // Python's names for the common dtypes
  if (!is_known_dtype(name)) {
    name = c10::toString(dtype);  // "UInt16", "Float8_e4m3fn": DCP's are the lower-case ones
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (!is_known_dtype(name))
    throw FormatError(std::string("DCP has no dtype for LibTorch's ") + c10::toString(dtype));
  return name;
}

}  // namespace shardkit::dcp
