// List-valued options (see shardkit/comma_list.hpp).
#include "shardkit/comma_list.hpp"

#include <boost/json.hpp>

#include "shardkit/error.hpp"

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

std::vector<std::string> class_name_list(const std::string& text, const std::string& flag) {
  std::vector<std::string> classes;
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return classes;
  const auto t = text.substr(first, text.find_last_not_of(" \t") - first + 1);
  if (t.front() != '[') return comma_list(t);
  boost::system::error_code ec;
  const auto value = boost::json::parse(t, ec);
  if (ec || !value.is_array())
    throw ConfigError(flag + "='" + text + "' is not a JSON list of class names; write it as '[\"MyBlock\"]'");
  for (const auto& item : value.as_array()) {
    if (!item.is_string()) throw ConfigError(flag + "='" + text + "': every entry must be a class name in quotes");
    classes.emplace_back(item.as_string().c_str());
  }
  return classes;
}

std::string join_list(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : separator) + items[i];
  return out;
}

}  // namespace shardkit
