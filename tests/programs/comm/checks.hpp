// Assertions for comm_worker: each failure throws with what was checked, on which rank.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include <torch/types.h>

namespace comm_worker {

/// Throws unless `actual` has `expected`'s shape and values (compared as float64).
void expect_equal(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what);
/// Throws unless `condition`.
void expect(bool condition, const std::string& what);
/// Throws unless `call` throws an exception whose message contains `part`.
void expect_throws(const std::function<void()>& call, const std::string& part,
                   const std::string& what);

}  // namespace comm_worker
