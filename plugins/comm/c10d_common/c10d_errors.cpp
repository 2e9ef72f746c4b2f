// One-line messages from c10d exceptions.
#include "c10d_errors.hpp"

#include <c10/util/Exception.h>

namespace shardkit::c10d_common {

std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    std::string text = c10_error->what_without_backtrace();
    // c10 appends "Exception raised from ..." on a new line: keep the first line.
    const auto newline = text.find('\n');
    return newline == std::string::npos ? text : text.substr(0, newline);
  }
  return error.what();
}

std::string current_message() {
  try {
    throw;
  } catch (const std::exception& e) {
    return message_of(e);
  } catch (...) {
    return "unknown error";
  }
}

bool is_address_in_use(const std::string& message) {
  return message.find("Address already in use") != std::string::npos ||
         message.find("EADDRINUSE") != std::string::npos ||
         message.find("errno: 98") != std::string::npos;
}

}  // namespace shardkit::c10d_common
