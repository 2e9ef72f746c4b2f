// The code docs/plugins.md shows whole is, byte for byte, the example files the SDK test builds.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct ShownFile {
  std::string path;   ///< relative to the source tree, as the marker names it
  std::string shown;  ///< the code block after the marker
};

/// Each `<!-- example: PATH -->` marker of `page` and the fenced code block right after it.
std::vector<ShownFile> shown_files(const std::string& page) {
  const std::string marker = "<!-- example: ";
  std::vector<ShownFile> out;
  for (auto at = page.find(marker); at != std::string::npos; at = page.find(marker, at + 1)) {
    const auto path_end = page.find(" -->", at);
    REQUIRE(path_end != std::string::npos);
    ShownFile file{page.substr(at + marker.size(), path_end - at - marker.size()), ""};
    INFO(file.path);
    const auto fence = page.find("```", path_end);
    REQUIRE(fence != std::string::npos);
    REQUIRE(page.find_first_not_of(" \n", path_end + 4) == fence);  // the block follows the marker
    const auto body = page.find('\n', fence) + 1;
    const auto close = page.find("\n```", body - 1);
    REQUIRE(close != std::string::npos);
    file.shown = page.substr(body, close + 1 - body);
    out.push_back(file);
  }
  return out;
}

}  // namespace

TEST_CASE("docs/plugins.md shows the example plugins exactly as they are built and tested") {
  const std::string root = SHARDKIT_SOURCE_DIR;
  const auto files = shown_files(read(root + "/docs/plugins.md"));
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.path);
  // The complete minimal policy, the dataset plugin and the logger plugin.
  CHECK(paths == std::vector<std::string>{"examples/plugin_guide/tiny_mlp_policy.cpp",
                                          "examples/plugin_guide/ramp_dataset.cpp",
                                          "examples/plugin_guide/csv_logger.cpp"});
  for (const auto& f : files) {
    INFO(f.path << ": the page's copy differs from the file; paste the file into the page again");
    CHECK(f.shown == read(root + "/" + f.path));
  }
}
