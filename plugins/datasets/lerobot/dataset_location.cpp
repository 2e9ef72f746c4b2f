// Resolving --dataset.repo_id / --dataset.root to a folder; no downloads, a clear error instead.
#include "dataset_location.hpp"

#include <cstdlib>
#include <filesystem>

#include <shardkit/error.hpp>

namespace shardkit::lerobot {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

fs::path lerobot_home() {
  if (auto home = env("HF_LEROBOT_HOME"); !home.empty()) return home;
  if (auto hf = env("HF_HOME"); !hf.empty()) return fs::path(hf) / "lerobot";
  if (auto xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "huggingface" / "lerobot";
  return fs::path(env("HOME")) / ".cache" / "huggingface" / "lerobot";
}

}  // namespace

std::string locate_dataset(const std::string& repo_id, const std::string& root) {
  if (repo_id.empty() && root.empty())
    throw ConfigError("--dataset.type=lerobot needs --dataset.repo_id=<user>/<name> (looked up under "
                      "$HF_LEROBOT_HOME) or --dataset.root=<dataset folder>");
  const fs::path folder = root.empty() ? lerobot_home() / repo_id : fs::path(root);
  if (!fs::is_directory(folder)) {
    const auto name = repo_id.empty() ? std::string("<user>/<name>") : repo_id;
    throw ConfigError("LeRobot dataset " + (repo_id.empty() ? std::string() : "'" + repo_id + "' ") +
                      "not found: " + folder.string() + " is not a folder. shardkit does not download; fetch it "
                      "with `hf download --repo-type dataset " + name + " --local-dir " + folder.string() +
                      "` (Hugging Face's CLI), or point --dataset.root at the folder that holds meta/info.json");
  }
  return folder.string();
}

}  // namespace shardkit::lerobot
