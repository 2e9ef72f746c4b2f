// Turning c10d exceptions into one-line messages (no C++ backtraces in user errors).
#pragma once

#include <exception>
#include <string>

namespace shardkit::c10d_common {

/// The message of `error` without c10's backtrace.
std::string message_of(const std::exception& error);
/// The message of the exception being handled (call inside a catch block).
std::string current_message();
/// True when a socket error says the port is taken (EADDRINUSE).
bool is_address_in_use(const std::string& message);

}  // namespace shardkit::c10d_common
