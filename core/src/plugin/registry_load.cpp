// Registry: loading plugin files (one at a time and by search) and settling duplicate names.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "library.hpp"
#include "loader_internal.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"

namespace shardkit {
namespace fs = std::filesystem;
using loader_detail::describe;
using loader_detail::DuplicatePluginError;

namespace {

constexpr const char* kSearchHint =
    "; check --plugins, --plugin_path and SHARDKIT_PLUGIN_PATH";

/// Opens `file` (canonical) with rtld_now | rtld_local; the dlerror text explains failures.
boost::dll::shared_library open_library(const std::string& file) {
  boost::dll::shared_library library;
  std::error_code ec;
  dlerror();  // clear any stale message so the one read below is about this file
  library.load(file, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec || !library.is_loaded()) {
    const char* why = dlerror();
    throw PluginError("plugin " + file + " does not load as a shared library: " +
                      (why ? std::string(why) : ec.message()) +
                      "; is it a shardkit plugin built for this platform, with every library "
                      "it needs on the loader's path?");
  }
  return library;
}

/// Refuses a plugin that another user could have written: the file itself, or the folder it
/// lies in, writable by every user (as /tmp is; its sticky bit keeps others from replacing a
/// file, not from putting one there). Plugins are code: shardkit runs what they hold.
void check_not_world_writable(const std::string& file) {
  std::error_code ec;
  const auto others_write = [&](const fs::path& p) {
    const auto perms = fs::status(p, ec).permissions();
    return !ec && (perms & fs::perms::others_write) != fs::perms::none;
  };
  const auto octal = [&](const fs::path& p) {
    char text[8];
    std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(fs::status(p, ec).permissions()) & 07777u);
    return std::string(text);
  };
  const fs::path path(file);
  if (others_write(path))
    throw PluginError("plugin " + file + " is writable by every user (mode " + octal(path) +
                      "): anyone could have changed the code it holds; remove that permission (chmod o-w " + file +
                      ") if you trust its content");
  if (const auto dir = path.parent_path(); others_write(dir))
    throw PluginError("plugin " + file + " lies in " + dir.string() + ", which every user can write to (mode " +
                      octal(dir) + "): anyone could have put it there; move it to a folder only you can write");
}

/// Calls the entry function, the only plugin code run before the checks pass.
const PluginDescriptor* read_descriptor(const boost::dll::shared_library& library,
                                        const std::string& file) {
  const std::string missing = "plugin " + file + " does not export " + kPluginEntrySymbol +
                              "; was it built with SHARDKIT_PLUGIN()?";
  if (!library.has(kPluginEntrySymbol)) throw PluginError(missing);
  auto& entry = library.get<const PluginDescriptor*()>(kPluginEntrySymbol);
  // dlsym also searches the library's dependencies: the entry must be the file's own.
  Dl_info info{};
  std::error_code ec;
  if (dladdr(reinterpret_cast<void*>(&entry), &info) == 0 || info.dli_fname == nullptr ||
      fs::canonical(info.dli_fname, ec) != fs::path(file))
    throw PluginError(missing);
  try {
    return entry();
  } catch (...) {
    throw PluginError("plugin " + file + ": " + kPluginEntrySymbol +
                      " threw an exception; rebuild the plugin with SHARDKIT_PLUGIN()");
  }
}

/// Keeps an accepted library mapped until exit: objects it made (autograd nodes, deleters)
/// can outlive every handle the registry knows about.
void pin(const std::string& file) {
  dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

Registry::Registry() = default;
Registry::~Registry() = default;

const LoadedPlugin& Registry::load_file(const std::string& path, bool explicit_file) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw PluginError("plugin file " + path + " does not exist" + kSearchHint);
  if (fs::is_directory(path, ec))
    throw PluginError("plugin file " + path +
                      " is a directory; --plugins takes library files, --plugin_path takes "
                      "directories");
  const std::string file = fs::canonical(path, ec).string();
  if (ec) throw PluginError("plugin file " + path + " cannot be resolved: " + ec.message());

  if (auto seen = libraries_.find(file); seen != libraries_.end()) {
    LoadedPlugin& current = plugins_.at(seen->second->key);
    if (current.file == file) {
      current.explicit_file = current.explicit_file || explicit_file;
      return current;
    }
    // This file lost its (kind, name) to an explicit file earlier.
    if (explicit_file)
      throw DuplicatePluginError(
          "two plugin files named with --plugins provide " +
          describe(seen->second->key.first, seen->second->key.second) + ": " + current.file +
          " and " + file + "; name only one of them");
    return current;
  }

  check_not_world_writable(file);
  auto library = std::make_shared<Library>();
  library->library = open_library(file);
  library->file = file;
  const PluginDescriptor* descriptor = read_descriptor(library->library, file);
  loader_detail::check_descriptor(descriptor, file);
  library->key = {descriptor->kind, descriptor->name};
  const std::string what = describe(descriptor->kind, descriptor->name);

  auto existing = plugins_.find(library->key);
  if (existing == plugins_.end()) {
    pin(file);
    libraries_[file] = library;
    return plugins_[library->key] = loader_detail::loaded_plugin(file, descriptor, explicit_file);
  }
  LoadedPlugin& old = existing->second;
  if (explicit_file && !old.explicit_file) {
    logger()->warn("{} from {} (named with --plugins) replaces the one found in {}", what, file,
                   old.file);
    pin(file);
    libraries_[file] = library;
    return old = loader_detail::loaded_plugin(file, descriptor, true);
  }
  if (!explicit_file && old.explicit_file) {
    const std::string reason = what + " is already provided by " + old.file +
                               " (named with --plugins), which wins over " + file;
    logger()->warn("{}", reason);
    refused_.push_back(RefusedPlugin{file, reason});
    libraries_[file] = library;  // remembered so that reaching it again is quiet
    return old;
  }
  if (explicit_file)
    throw DuplicatePluginError("two plugin files named with --plugins provide " + what + ": " +
                               old.file + " and " + file + "; name only one of them");
  throw DuplicatePluginError("two plugin files provide " + what + ": " + old.file + " and " +
                             file + "; remove one, or name the one to use with --plugins=<file>");
}

void Registry::discover(const PluginSearch& search) {
  auto refused_already = [this](const std::string& file) {
    std::error_code ec;
    const std::string canonical = fs::canonical(file, ec).string();
    for (const auto& r : refused_)
      if (r.file == file || r.file == canonical) return true;
    return false;
  };
  auto scan = [&](const std::string& dir) {
    for (const auto& file : loader_detail::plugin_files_in(dir)) {
      if (refused_already(file)) continue;
      try {
        load_file(file, false);
      } catch (const DuplicatePluginError&) {
        throw;  // ambiguous: the user must choose
      } catch (const PluginError& e) {
        logger()->warn("skipping {}", e.what());
        std::error_code ec;
        const auto canonical = fs::canonical(file, ec);
        refused_.push_back(RefusedPlugin{ec ? file : canonical.string(), e.what()});
      }
    }
  };

  for (const auto& file : search.explicit_files) load_file(file, true);
  std::error_code ec;
  for (const auto& dir : search.dirs) {
    if (!fs::is_directory(dir, ec))
      throw ConfigError("--plugin_path names " + dir +
                        ", which is not a directory; give existing directories separated by ':'");
    scan(dir);
  }
  if (search.use_env) {
    const char* env = std::getenv("SHARDKIT_PLUGIN_PATH");
    for (const auto& dir : loader_detail::split_path_list(env ? env : "")) {
      if (!fs::is_directory(dir, ec)) {
        logger()->warn("SHARDKIT_PLUGIN_PATH names {}, which is not a directory; skipped", dir);
        continue;
      }
      scan(dir);
    }
  }
  if (search.use_exe_dir) {
    const std::string dir = default_plugin_dir();
    if (!dir.empty()) scan(dir);
  }
}

}  // namespace shardkit
