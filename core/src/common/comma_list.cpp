// List-valued options (see shardkit/comma_list.hpp).
#include "shardkit/comma_list.hpp"

namespace shardkit {

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    const auto item = text.substr(start, end - start);
    const auto first = item.find_first_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, item.find_last_not_of(" \t") - first + 1));
    start = end + 1;
  }
  return items;
}

std::vector<std::string> comma_list(const std::string& text) { return split_list(text, ','); }

std::string join_list(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : separator) + items[i];
  return out;
}

}  // namespace shardkit
