// comm_worker's assertions.
#include "checks.hpp"

#include <sstream>

namespace comm_worker {

void expect_equal(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  const auto a = actual.to(torch::kDouble);
  const auto e = expected.to(torch::kDouble);
  if (a.sizes() == e.sizes() && torch::equal(a, e)) return;
  std::ostringstream out;
  out << what << ": got " << a.reshape(-1) << " expected " << e.reshape(-1);
  throw std::runtime_error(out.str());
}

void expect(bool condition, const std::string& what) {
  if (!condition) throw std::runtime_error("check failed: " + what);
}

void expect_throws(const std::function<void()>& call, const std::string& part,
                   const std::string& what) {
  try {
    call();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(part) != std::string::npos) return;
    throw std::runtime_error(what + ": threw '" + e.what() + "', expected a message with '" +
                             part + "'");
  }
  throw std::runtime_error(what + ": did not throw");
}

}  // namespace comm_worker
