// CollectiveScope: the label that collectives issued while it lives carry (the ledger reports it).
#include "shardkit/ledger.hpp"

#include <mutex>

namespace shardkit {
namespace {

std::mutex scope_mutex;
std::string scope_label;  // one label for every thread: autograd threads issue collectives too

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

}  // namespace shardkit
