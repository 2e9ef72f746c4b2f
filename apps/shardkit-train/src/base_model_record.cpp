// A PEFT run's base model record: the base's weight files with sizes and checksums, and how they changed.
#include "base_model_record.hpp"
#include "elapsed.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <system_error>
#include <vector>

#include "checkpoint_manifest.hpp"
#include "rank_agreement.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::train {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kKind = "shardkit base model record";

/// The files of `base` that decide its weights, relative to it.
std::vector<std::string> weight_files(const fs::path& base) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const auto name = e.path().filename().string();
    if (e.is_regular_file(ec) &&
        (name == "config.json" || name.ends_with(".safetensors") || name.ends_with(".safetensors.index.json")))
      names.push_back(name);
  }
  // A shardkit checkpoint's pretrained_model: a DCP checkpoint keeps the model beside it.
  const auto checkpoint = base.parent_path();
  if (base.filename() == "pretrained_model" && fs::is_directory(checkpoint / "training_state"))
    for (const auto& e : fs::directory_iterator(checkpoint, ec)) {
      const auto folder = e.path().filename().string();
      if (!e.is_directory(ec) || folder == "pretrained_model" || folder == "training_state") continue;
      for (const auto& f : fs::recursive_directory_iterator(e.path(), ec))
        if (f.is_regular_file(ec)) names.push_back("../" + fs::relative(f.path(), checkpoint).generic_string());
    }
  return names;
}

}  // namespace

BaseModelRecord BaseModelRecord::of(const std::string& base) {
  BaseModelRecord record;
  const fs::path folder = folder_path(base);
  record.path = folder.string();
  for (const auto& name : weight_files(folder)) {
    const auto file = (folder / name).lexically_normal();
    record.files[name] = Stamp{static_cast<std::uint64_t>(fs::file_size(file)), file_checksum(file.string())};
  }
  return record;
}

BaseModelRecord BaseModelRecord::parse(const std::string& text, const std::string& origin) {
  try {
    const auto value = json::parse(text);
    const auto& o = value.as_object();
    if (o.at("kind").as_string() != kKind) throw FormatError(origin + " is not a " + kKind);
    BaseModelRecord record;
    record.path = std::string(o.at("path").as_string());
    for (const auto& [name, entry] : o.at("files").as_object())
      record.files[std::string(name)] = Stamp{entry.as_object().at("size").to_number<std::uint64_t>(),
                                              std::string(entry.as_object().at("xxh3_64").as_string())};
    return record;
  } catch (const FormatError&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError(origin + " is damaged (" + e.what() + ")");
  }
}

std::string BaseModelRecord::to_json() const {
  json::object files_object;
  for (const auto& [name, stamp] : files) {
    json::object entry;
    entry["size"] = stamp.size;
    entry["xxh3_64"] = stamp.xxh3_64;
    files_object[name] = std::move(entry);
  }
  json::object record;
  record["kind"] = kKind;
  record["version"] = 1;
  record["path"] = path;
  record["files"] = std::move(files_object);
  return json::serialize(record) + "\n";
}

std::string BaseModelRecord::change_in(const std::string& base) const {
  const fs::path folder = folder_path(base);
  for (const auto& [name, stamp] : files) {
    const auto file = (folder / name).lexically_normal();
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) return file.string() + " is gone";
    if (size != stamp.size)
      return file.string() + " is " + std::to_string(size) + " bytes; it was " + std::to_string(stamp.size);
    if (file_checksum(file.string()) != stamp.xxh3_64)
      return file.string() + " holds other bytes (same size, another XXH3-64 checksum)";
  }
  return "";
}

std::string base_model_record_at_start(CommGroup& world, const std::string& base, const std::string& resume_dir) {
  const auto started = std::chrono::steady_clock::now();
  std::string recorded;
  rank0_verdict(world, [&]() -> std::string {
    const auto path = (fs::path(resume_dir) / kBaseModelFile).string();
    if (resume_dir.empty() || !fs::exists(path)) {
      if (!resume_dir.empty())
        logger()->warn("{} has no {} (saved by an older shardkit): its base model is not checked; recorded now",
                       resume_dir, kBaseModelFile);
      recorded = BaseModelRecord::of(base).to_json();
      return "";
    }
    auto record = BaseModelRecord::parse(read_text_file(path), path);
    if (const auto change = record.change_in(base); !change.empty())
      return "the base model changed since this run started: " + change + " (" + path + " recorded it when the "
             "run started). The checkpoint's adapter was trained on the old weights; restore them at " + base +
             ", or train the adapter further on the changed base as a new run: --policy.path=" +
             (fs::path(resume_dir) / "pretrained_model").string() + " --output_dir=<a new folder>";
    record.path = base;
    recorded = record.to_json();
    return "";
  });
  logger()->debug("base model {}: recorded or checked in {:.2f} s", base,
                  seconds_since(started));
  return recorded;
}

}  // namespace shardkit::train
