// Reading the TORCHELASTIC_ERROR_FILE a failed worker may have written.
#pragma once

#include <string>

namespace shardkit::run {

/// The message in a worker's error file, or "" when the file is missing or empty.
/// torchrun's layout {"message": {"message": "...", "extraInfo": {...}}} and the flat
/// {"message": "..."} both give the inner text; other JSON is shown as written, and a
/// file that is not JSON is shown raw (at most 4000 characters either way).
std::string read_error_message(const std::string& path);

}  // namespace shardkit::run
