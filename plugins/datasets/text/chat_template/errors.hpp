// The renderer's inner error (a Python-like error not yet given a template line) and its refusal text.
#pragma once

#include <stdexcept>
#include <string>

namespace shardkit::chat {

/// A Python-like error while evaluating (a TypeError, an undefined value used, raise_exception). The
/// renderer turns it into a ConfigError naming the template and line.
class EvalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~EvalError() override;
};

/// The one message for a construct the renderer lacks; `where` is "<name>:<line>:<column>".
inline std::string unsupported_message(const std::string& where, const std::string& construct) {
  return where + ": " + construct +
         " is not supported by shardkit's chat template renderer; rewrite the template without it";
}

}  // namespace shardkit::chat
