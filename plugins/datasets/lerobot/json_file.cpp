// Reading the dataset's JSON metadata files with errors naming the file and the member.
#include "json_file.hpp"

#include <boost/json/parse.hpp>

#include <fstream>
#include <sstream>

#include <shardkit/error.hpp>

namespace shardkit::lerobot {

boost::json::value read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_json_text(text.str(), path);
}

boost::json::value parse_json_text(const std::string& text, const std::string& path) {
  boost::system::error_code ec;
  auto value = boost::json::parse(text, ec);
  if (ec) throw FormatError(path + " is not valid JSON (" + ec.message() + ")");
  return value;
}

const boost::json::value& json_member(const boost::json::value& object, const std::string& key,
                                      const std::string& path) {
  const auto* obj = object.if_object();
  const auto* member = obj ? obj->if_contains(key) : nullptr;
  if (!member) throw FormatError(path + " has no \"" + key + "\" entry");
  return *member;
}

}  // namespace shardkit::lerobot
