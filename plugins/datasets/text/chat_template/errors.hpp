// The renderer's inner error (a Python-like error not yet given a template line) and its refusal text.
#pragma once

#include <cstddef>
#include <cstdint>
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

/// The most bytes a rendered text, or any string or list a template builds, may hold (64 MiB): a
/// template that doubles a string in a loop stops here instead of exhausting memory.
inline constexpr std::size_t kMaxTemplateBytes = std::size_t{1} << 26;
/// The most loop iterations one render may run, all loops together; a chat template needs a few
/// per message.
inline constexpr std::int64_t kMaxLoopIterations = 100'000;
/// The deepest nesting of statements and expressions a template may have (parsing recurses).
inline constexpr int kMaxNesting = 200;

/// Throws EvalError when a string or list of `size` bytes or items would pass kMaxTemplateBytes.
inline void check_size(std::size_t size, const char* what) {
  if (size > kMaxTemplateBytes)
    throw EvalError(std::string(what) + " would hold more than 64 MiB; the template builds too much (a string "
                    "doubled in a loop?)");
}

/// The one message for a construct the renderer lacks; `where` is "<name>:<line>:<column>".
inline std::string unsupported_message(const std::string& where, const std::string& construct) {
  return where + ": " + construct +
         " is not supported by shardkit's chat template renderer; rewrite the template without it";
}

}  // namespace shardkit::chat
