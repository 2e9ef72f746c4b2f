// Checkpoint manifests: writing them, checking a folder against one, choosing the newest complete checkpoint.
#include "checkpoint_manifest.hpp"

#include <xxhash.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "checkpoint_io.hpp"
#include "shardkit/error.hpp"
#include "shardkit/publish_file.hpp"
#include "shardkit/files.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kKind = "shardkit checkpoint manifest";

std::string hex64(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

/// A manifest's entry for one file: its size and checksum.
json::object manifest_entry(const fs::path& file) {
  json::object entry;
  entry["size"] = static_cast<std::uint64_t>(fs::file_size(file));
  entry["xxh3_64"] = file_checksum(file);
  return entry;
}

/// Writes `dir`/manifest.json listing `files`: a temporary file (fsync'ed), renamed over the
/// old one, then the folder synced, so that a crash leaves either manifest, never half of one,
/// and the new one is durable before anything relies on it.
void replace_manifest(const std::string& dir, json::object files) {
  json::object manifest;
  manifest["kind"] = kKind;
  manifest["version"] = 1;
  manifest["files"] = std::move(files);
  publish_text_file((fs::path(dir) / kManifestFile).string(), json::serialize(manifest) + "\n");
}

/// The "files" object of the manifest at `path`; FormatError naming the file when it cannot be
/// read, is not JSON or is not a shardkit checkpoint manifest.
json::object manifest_files(const fs::path& path) {
  try {
    const auto value = json::parse(read_text_file(path.string()));
    const auto& o = value.as_object();
    if (o.at("kind").as_string() == kKind) return o.at("files").as_object();
  } catch (const std::exception& e) {
    throw FormatError(path.string() + " is damaged (" + e.what() + ")");
  }
  throw FormatError(path.string() + " is not a shardkit checkpoint manifest");
}

/// The checkpoint folders (step folders holding pretrained_model/) under `checkpoints_dir`,
/// newest first.
std::vector<fs::path> step_folders(const std::string& checkpoints_dir) {
  std::vector<fs::path> steps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec))
    if (!e.is_symlink() && e.is_directory() && is_step_dir_name(e.path().filename().string()) &&
        fs::is_directory(e.path() / "pretrained_model"))
      steps.push_back(e.path());
  std::sort(steps.begin(), steps.end(), [](const fs::path& a, const fs::path& b) {
    return std::stoll(a.filename().string()) > std::stoll(b.filename().string());
  });
  return steps;
}

}  // namespace

std::string file_checksum(const std::string& path) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError("cannot read " + path);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    XXH3_64bits_update(state.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  return hex64(XXH3_64bits_digest(state.get()));
}

void write_manifest(const std::string& dir) {
  json::object files;
  for (const auto& name : files_under(dir))
    if (name != kManifestFile) files[name] = manifest_entry(fs::path(dir) / name);
  replace_manifest(dir, std::move(files));
}

bool update_manifest(const std::string& dir, const std::vector<std::string>& written,
                     const std::vector<std::string>& removed) {
  const auto path = fs::path(dir) / kManifestFile;
  if (!fs::exists(path)) return false;
  // Sorted by name, as write_manifest lists them.
  std::map<std::string, json::value> entries;
  try {
    for (const auto& [name, entry] : manifest_files(path)) entries.emplace(std::string(name), entry);
  } catch (const FormatError& e) {
    throw FormatError(std::string(e.what()) + "; it was left as it was");
  }
  const auto under = [](const std::string& name, const std::string& folder) {
    return name == folder || name.rfind(folder + "/", 0) == 0;
  };
  for (auto it = entries.begin(); it != entries.end();) {
    const bool gone = std::any_of(removed.begin(), removed.end(),
                                  [&](const std::string& folder) { return under(it->first, folder); });
    it = gone ? entries.erase(it) : std::next(it);
  }
  for (const auto& name : written) {
    const auto file = fs::path(dir) / name;
    if (!fs::is_regular_file(file))
      throw FormatError(file.string() + " is missing: it cannot be listed in " + path.string());
    entries[name] = manifest_entry(file);
  }
  json::object files;
  for (auto& [name, entry] : entries) files[name] = std::move(entry);
  replace_manifest(dir, std::move(files));
  return true;
}

std::string manifest_problem(const std::string& dir, Verify how) {
  const auto path = fs::path(dir) / kManifestFile;
  if (!fs::is_directory(dir)) return dir + " does not exist";
  // shardkit writes no links into a checkpoint: one that leads outside it is not shardkit's.
  if (const auto link = link_leaving(dir); !link.empty())
    return "it holds the link " + link + ", which leads outside the checkpoint folder; nothing was read through it";
  if (!fs::exists(path)) {
    if (how == Verify::Checksums)
      return "it has no " + std::string(kManifestFile) +
             " to verify against (saved by an older shardkit or another tool); drop --checkpoint.verify to load it";
    return checkpoint_files_problem(dir);
  }
  json::object files;
  try {
    files = manifest_files(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  for (const auto& [name, entry] : files) {
    if (!stays_inside(std::string(name)))
      return path.string() + " lists '" + std::string(name) + "', a path outside the checkpoint folder: the "
             "manifest is damaged or not shardkit's; nothing outside the folder was read";
    const auto file = fs::path(dir) / std::string(name);
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) return std::string(name) + " is missing or unreadable (its manifest lists it)";
    try {
      const auto want = entry.as_object().at("size").to_number<std::uint64_t>();
      if (size != want)
        return std::string(name) + " is " + std::to_string(size) + " bytes, its manifest says " + std::to_string(want);
      if (how == Verify::Checksums) {
        const auto sum = std::string(entry.as_object().at("xxh3_64").as_string());
        if (file_checksum(file) != sum)
          return std::string(name) + " is damaged: its checksum differs from the manifest's (same size)";
      }
    } catch (const std::exception& e) {
      return path.string() + " is damaged or unreadable (entry " + std::string(name) + ": " + e.what() + ")";
    }
  }
  return "";
}

std::string newest_complete_checkpoint(const std::string& checkpoints_dir, const std::string& exclude) {
  std::error_code ec;
  for (const auto& step : step_folders(checkpoints_dir)) {
    if (!exclude.empty() && fs::equivalent(step, exclude, ec)) continue;
    if (manifest_problem(step.string(), Verify::Sizes).empty()) return step.string();
  }
  return "";
}

std::string other_checkpoint_advice(const std::string& dir) {
  const auto other = newest_complete_checkpoint(fs::path(dir).parent_path().string(), dir);
  if (other.empty()) return "No other complete checkpoint is in " + fs::path(dir).parent_path().string();
  return "Resume from " + other + " (the newest other complete checkpoint) with --config_path=" +
         (fs::path(other) / "pretrained_model/train_config.json").string();
}

std::string newest_checkpoint(const std::string& checkpoints_dir) {
  const auto steps = step_folders(checkpoints_dir);
  return steps.empty() ? std::string() : steps.front().string();
}

std::vector<std::string> restore_moved_aside(const std::string& checkpoints_dir) {
  std::vector<std::string> done;
  std::error_code ec;
  std::vector<fs::path> aside;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec))
    if (e.path().filename().string().rfind(".old-", 0) == 0) aside.push_back(e.path());
  for (const auto& path : aside) {
    const auto step = fs::path(checkpoints_dir) / path.filename().string().substr(5);
    if (fs::exists(step, ec)) continue;
    fs::rename(path, step, ec);
    if (!ec)
      done.push_back("restored checkpoints/" + step.filename().string() + " from " + path.filename().string() +
                     " (its new copy was never published)");
  }
  return done;
}

std::vector<std::string> remove_unfinished_saves(const std::string& checkpoints_dir) {
  auto done = restore_moved_aside(checkpoints_dir);
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(checkpoints_dir, ec)) entries.push_back(e.path());
  for (const auto& path : entries) {
    const auto name = path.filename().string();
    if (name.rfind(".old-", 0) == 0 && fs::exists(path, ec)) {
      fs::remove_all(path, ec);  // its step exists again (restored above or newly saved)
      done.push_back("removed checkpoints/" + name + ", the previous copy of a step saved again");
    } else if (name.rfind(".tmp-", 0) == 0 || name == ".last.tmp") {
      fs::remove_all(path, ec);
      done.push_back("removed checkpoints/" + name + ", left by a save that was interrupted");
    }
  }
  return done;
}

}  // namespace shardkit::train
