// One-line exception messages: LibTorch errors lose their backtrace.
#include "shardkit/error_text.hpp"

#include <c10/util/Exception.h>

namespace shardkit {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string one_line_message(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    return first_line(c10_error->what_without_backtrace());
  return first_line(error.what());
}

}  // namespace shardkit
