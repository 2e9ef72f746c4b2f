// One-line messages from c10d exceptions.
#include "c10d_errors.hpp"

#include "shardkit/error_text.hpp"

namespace shardkit::c10d_common {

std::string message_of(const std::exception& error) { return one_line_message(error); }

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
