// One-line text of any exception, for messages a user reads (LibTorch's own carry a stack trace),
// and where an exception from outside shardkit happened (step, phase, module).
//
// Code that knows where it is wraps the work that may fail, at no cost when nothing throws:
//
//   for (std::size_t i = 0; i < layers->size(); ++i) {
//     try {
//       x = layers[i]->forward(x);
//     } catch (...) {
//       shardkit::rethrow_with_context({0, "", "model.layers." + std::to_string(i)});
//     }
//   }
//
// A LibTorch error leaving it becomes an ExternalError; the trainer adds the step and phase on
// its way out, and shardkit-train prints one line: "at step 3 (forward) in module
// model.layers.1: mat1 and mat2 shapes cannot be multiplied (...)".
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace shardkit {

/// The first line of `text` (all of it when it has no newline).
std::string first_line(const std::string& text);

/// What `error` says, on one line: a LibTorch (c10) error without the backtrace and the
/// "Exception raised from ..." line it appends, an ExternalError with where it happened,
/// anything else its what()'s first line.
std::string one_line_message(const std::exception& error);

/// Where an error happened, as far as the code that saw it pass knows. Every field may be
/// unknown.
struct ErrorPlace {
  std::int64_t step = 0;  ///< the training step (1-based, as logged); 0 = not known here
  std::string phase;      ///< "data", "forward", "backward", "optimizer step"; "" = not known here
  std::string module;     ///< the module that was running ("blocks.0 (FixtureBlock)"); "" = not known here
};

/// An exception from outside shardkit's own hierarchy (LibTorch, the C++ library, a plugin's
/// std::exception) with where it happened. what() is the place followed by the whole original
/// text (a LibTorch error's backtrace included: SHARDKIT_FULL_ERRORS=1 prints it); one_line()
/// is the place followed by the original's first line without the backtrace. Deliberately no
/// shardkit::Error: those name their cause themselves and pass through unchanged.
class ExternalError : public std::exception {
 public:
  /// `cause` as caught (not a shardkit::Error), and what is known of where.
  ExternalError(const std::exception& cause, ErrorPlace place);
  ~ExternalError() override;
  /// Fills in what `outer` knows and this place does not (an inner module stays).
  void add(const ErrorPlace& outer);
  const ErrorPlace& place() const { return place_; }
  /// "at step 3 (forward) in module blocks.0 (FixtureBlock)"; "" when nothing is known.
  std::string where() const;
  /// where() and the cause's first line, without a backtrace.
  std::string one_line() const;
  /// where() and the cause's whole text.
  const char* what() const noexcept override;

 private:
  void refresh();
  ErrorPlace place_;
  std::string cause_line_;  ///< one_line_message(cause)
  std::string cause_text_;  ///< cause.what()
  std::string what_;
};

/// Rethrows the exception being handled, with `place`: a shardkit::Error unchanged, an
/// ExternalError with what `place` adds to it, any other std::exception as an ExternalError
/// carrying it, anything else unchanged. Call it only inside a catch block.
[[noreturn]] void rethrow_with_context(const ErrorPlace& place);

}  // namespace shardkit
