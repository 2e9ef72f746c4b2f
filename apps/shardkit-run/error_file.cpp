// read_error_message(): the torchelastic error-file convention, leniently.
#include "error_file.hpp"

#include <fstream>
#include <sstream>

#include <boost/json.hpp>

namespace shardkit::run {
namespace {
constexpr std::size_t kLimit = 4000;

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  text = text.substr(first, last - first + 1);
  if (text.size() > kLimit) text = text.substr(0, kLimit) + "...";
  return text;
}
}  // namespace

std::string read_error_message(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = trimmed(buffer.str());
  if (text.empty()) return "";
  boost::json::error_code ec;
  const boost::json::value value = boost::json::parse(text, ec);
  if (ec) return text;
  if (const auto* object = value.if_object()) {
    if (const auto* message = object->if_contains("message")) {
      if (message->is_string()) return trimmed(std::string(message->as_string()));
      if (const auto* inner = message->if_object())
        if (const auto* text_value = inner->if_contains("message"); text_value && text_value->is_string())
          return trimmed(std::string(text_value->as_string()));
      return trimmed(boost::json::serialize(*message));
    }
  }
  return trimmed(boost::json::serialize(value));
}

}  // namespace shardkit::run
