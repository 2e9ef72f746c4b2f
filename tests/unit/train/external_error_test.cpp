// Errors from outside shardkit gather where they happened on their way out (module, then step
// and phase) and print as one line; shardkit's own errors pass through unchanged.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's

#include <catch2/catch.hpp>

#include "shardkit/error.hpp"
#include "shardkit/error_text.hpp"

using namespace shardkit;

namespace {

/// LibTorch's own error: a product of wrongly shaped matrices.
void torch_fails() { (void)torch::matmul(torch::ones({2, 4}), torch::ones({3, 5})); }

/// Runs `body` inside a module's and then a step's context, as the policy and the trainer do.
template <class Body>
void in_step_and_module(Body body) {
  try {
    try {
      body();
    } catch (...) {
      rethrow_with_context({.module = "model.layers.1 (LlamaDecoderLayer)"});
    }
  } catch (...) {
    rethrow_with_context({7, "forward", "ignored: the inner module stays"});
  }
}

}  // namespace

TEST_CASE("a LibTorch error becomes one line with the step, the phase and the innermost module") {
  try {
    in_step_and_module(torch_fails);
    FAIL("no exception");
  } catch (const ExternalError& e) {
    const auto line = one_line_message(e);
    INFO(line);
    CHECK(line.rfind("at step 7 (forward) in module model.layers.1 (LlamaDecoderLayer): ", 0) == 0);
    CHECK(line.find("shapes cannot be multiplied (2x4 and 3x5)") != std::string::npos);
    CHECK(line.find('\n') == std::string::npos);
    // what(): the same place, then LibTorch's whole text with its backtrace.
    const std::string whole = e.what();
    CHECK(whole.rfind("at step 7 (forward) in module model.layers.1 (LlamaDecoderLayer): ", 0) == 0);
    CHECK(whole.find("Exception raised from") != std::string::npos);
  }
}

TEST_CASE("shardkit's own errors pass through a context unchanged; other exceptions are wrapped") {
  try {
    in_step_and_module([] { throw ConfigError("--steps=0 is below 1"); });
    FAIL("no exception");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "--steps=0 is below 1");
  }
  try {
    try {
      throw std::out_of_range("map::at\nsecond line");
    } catch (...) {
      rethrow_with_context({3, "data", ""});
    }
    FAIL("no exception");
  } catch (const ExternalError& e) {
    CHECK(one_line_message(e) == "at step 3 (data): map::at");
    CHECK(std::string(e.what()) == "at step 3 (data): map::at\nsecond line");
  }
}
