// Keeping a run's newest checkpoints and telling apart what in the folder is not shardkit's.
#include "checkpoint_limit.hpp"

#include <algorithm>
#include <filesystem>

#include "checkpoint_io.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
std::vector<std::string> foreign_checkpoint_entries(const std::string& checkpoints_dir) {
  std::vector<std::string> foreign;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const auto name = e.path().filename().string();
    const bool ours = (is_step_dir_name(name) && e.is_directory(ec) && !e.is_symlink(ec)) || name == "last" ||
                      name == ".last.tmp" || name.rfind(".tmp-", 0) == 0 || name.rfind(".old-", 0) == 0;
    if (!ours) foreign.push_back(name);
  }
  std::sort(foreign.begin(), foreign.end());
  return foreign;
}

std::vector<std::string> remove_old_checkpoints(const std::string& checkpoints_dir, std::int64_t keep) {
  std::vector<std::pair<std::int64_t, fs::path>> steps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec)) {
    const auto name = e.path().filename().string();
    if (is_step_dir_name(name) && e.is_directory(ec) && !e.is_symlink(ec)) steps.emplace_back(std::stoll(name), e.path());
  }
  std::sort(steps.begin(), steps.end());
  const auto last = fs::read_symlink(fs::path(checkpoints_dir) / "last", ec).filename().string();
  std::vector<std::string> removed;
  const auto surplus = static_cast<std::int64_t>(steps.size()) - std::max<std::int64_t>(keep, 1);
  for (std::int64_t i = 0; i < surplus; ++i) {
    const auto name = steps[static_cast<std::size_t>(i)].second.filename().string();
    if (name == last) continue;
    if (fs::remove_all(steps[static_cast<std::size_t>(i)].second, ec) > 0 && !ec) removed.push_back(name);
  }
  return removed;
}

}  // namespace shardkit::train
