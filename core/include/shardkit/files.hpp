// Small crash-safe file helpers shared by core and the format plugins.
#pragma once

#include <string>

namespace shardkit {

/// Writes `content` to `path` and fsyncs it. Throws FormatError naming the path.
void write_text_file(const std::string& path, const std::string& content);
/// Reads a whole file. Throws FormatError naming the path when it cannot be read.
std::string read_text_file(const std::string& path);
/// fsyncs a directory so that renames inside it are durable.
void sync_directory(const std::string& path);
/// Creates directories like `mkdir -p`. Throws FormatError naming the path.
void make_directories(const std::string& path);
/// `path` lexically normalised and without a trailing separator ("run/x/" -> "run/x"), so that
/// its last component is the folder's own name.
std::string folder_path(const std::string& path);
/// Whether `relative`, a name read from a file (a path in a manifest, a dataset's path template),
/// stays inside the folder it is relative to: not empty, not absolute, and no ".." part.
bool stays_inside(const std::string& relative);
/// A symbolic link under `folder` (at any depth, links not followed) whose target resolves
/// outside `folder`, as "<relative name> -> <target>"; "" when there is none. Reading through
/// such a link would read a file the folder does not hold.
std::string link_leaving(const std::string& folder);

}  // namespace shardkit
