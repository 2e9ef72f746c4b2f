// Turning c10d and Gloo exceptions into one-line messages (no C++ backtraces in user errors).
#pragma once

#include <chrono>
#include <exception>
#include <string>

namespace shardkit::gloo {

/// The message of `error` without c10's backtrace.
std::string message_of(const std::exception& error);
/// The message of the exception being handled (call inside a catch block).
std::string current_message();
/// True when a socket error says the port is taken (EADDRINUSE).
bool is_address_in_use(const std::string& message);
/// "3 s", "0.5 s": a timeout as people write it.
std::string seconds_text(std::chrono::milliseconds timeout);

}  // namespace shardkit::gloo
