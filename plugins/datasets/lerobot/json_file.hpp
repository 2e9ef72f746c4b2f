// Reading the dataset's JSON metadata files (meta/info.json, meta/stats.json) with errors naming the file.
#pragma once

#include <string>

#include <boost/json/value.hpp>

namespace shardkit::lerobot {

/// Parses the JSON file at `path`. Throws FormatError naming the file when it is missing,
/// unreadable or not valid JSON.
boost::json::value read_json_file(const std::string& path);
/// Parses `text` (the contents of `path`). Throws FormatError naming the file when it is not
/// valid JSON.
boost::json::value parse_json_text(const std::string& text, const std::string& path);

/// The member `key` of object `object` (read from `path`), or a FormatError naming both.
const boost::json::value& json_member(const boost::json::value& object, const std::string& key,
                                      const std::string& path);

}  // namespace shardkit::lerobot
