// CollectiveScope: the label that collectives issued while it lives carry (the ledger reports it);
// CollectivePadding: how much of their tensor is padding (the ledger's byte accounting).
#include "shardkit/ledger.hpp"

#include <mutex>

namespace shardkit {
namespace {

std::mutex scope_mutex;
std::string scope_label;  // one label for every thread: autograd threads issue collectives too
std::int64_t padding_bytes = 0;  // the same, under the same lock

}  // namespace

CollectiveScope::CollectiveScope(const std::string& what) {
  std::lock_guard<std::mutex> lock(scope_mutex);
  previous_ = std::move(scope_label);
  scope_label = what;
}

CollectiveScope::~CollectiveScope() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  scope_label = std::move(previous_);
}

std::string current_collective_scope() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  return scope_label;
}

CollectivePadding::CollectivePadding(std::int64_t bytes) {
  std::lock_guard<std::mutex> lock(scope_mutex);
  previous_ = padding_bytes;
  padding_bytes = bytes;
}

CollectivePadding::~CollectivePadding() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  padding_bytes = previous_;
}

std::int64_t current_collective_padding() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  return padding_bytes;
}

}  // namespace shardkit
