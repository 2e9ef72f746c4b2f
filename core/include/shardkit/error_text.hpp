// One-line text of any exception, for messages a user reads (LibTorch's own carry a stack trace).
#pragma once

#include <exception>
#include <string>

namespace shardkit {

/// The first line of `text` (all of it when it has no newline).
std::string first_line(const std::string& text);

/// What `error` says, on one line: a LibTorch (c10) error without the backtrace and the
/// "Exception raised from ..." line it appends, anything else its what()'s first line.
std::string one_line_message(const std::exception& error);

}  // namespace shardkit
