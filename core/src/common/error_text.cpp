// One-line exception messages (LibTorch errors lose their backtrace) and the place of an external error.
#include "shardkit/error_text.hpp"

#include <c10/util/Exception.h>

#include <utility>

#include "shardkit/error.hpp"

namespace shardkit {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string one_line_message(const std::exception& error) {
  if (const auto* external = dynamic_cast<const ExternalError*>(&error)) return external->one_line();
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    return first_line(c10_error->what_without_backtrace());
  return first_line(error.what());
}

ExternalError::ExternalError(const std::exception& cause, ErrorPlace place)
    : place_(std::move(place)), cause_line_(one_line_message(cause)), cause_text_(cause.what()) {
  refresh();
}

ExternalError::~ExternalError() = default;

void ExternalError::add(const ErrorPlace& outer) {
  if (place_.step == 0) place_.step = outer.step;
  if (place_.phase.empty()) place_.phase = outer.phase;
  if (place_.module.empty()) place_.module = outer.module;
  refresh();
}

std::string ExternalError::where() const {
  std::string text;
  if (place_.step > 0) text = "at step " + std::to_string(place_.step);
  if (!place_.phase.empty()) text += (text.empty() ? "in the " + place_.phase : " (" + place_.phase + ")");
  if (!place_.module.empty()) text += (text.empty() ? "" : " ") + std::string("in module ") + place_.module;
  return text;
}

std::string ExternalError::one_line() const {
  const auto at = where();
  return at.empty() ? cause_line_ : at + ": " + cause_line_;
}

const char* ExternalError::what() const noexcept { return what_.c_str(); }

void ExternalError::refresh() {
  const auto at = where();
  what_ = at.empty() ? cause_text_ : at + ": " + cause_text_;
}

void rethrow_with_context(const ErrorPlace& place) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (ExternalError& e) {
    e.add(place);
    throw;
  } catch (const std::exception& e) {
    throw ExternalError(e, place);
  }
}

}  // namespace shardkit
