// A counting wrapper around c10's CPU allocator (live bytes and peak).
#include "tensor_memory.hpp"

#include <atomic>
#include <cstring>
#include <mutex>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

namespace shardkit::train {
namespace {

std::atomic<std::int64_t> g_live{0};
std::atomic<std::int64_t> g_peak{0};

void add(std::int64_t n) {
  const auto now = g_live.fetch_add(n) + n;
  auto peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

// Each counted block starts with a header holding its size, so that the data pointer is its
// own context (LibTorch's raw_allocate() requires "simple" data pointers) and the deleter
// finds the size. The header is as large as the CPU alignment, which the data keeps.
constexpr std::size_t kHeader = 64;
c10::DeleterFnPtr g_inner_delete = nullptr;

void delete_counted(void* data) {
  auto* base = static_cast<char*>(data) - kHeader;
  std::int64_t bytes = 0;
  std::memcpy(&bytes, base, sizeof bytes);
  g_live.fetch_sub(bytes);
  g_inner_delete(base);
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(std::size_t n) override {
    auto inner = inner_->allocate(n + kHeader);
    auto* base = static_cast<char*>(inner.get());
    const auto device = inner.device();
    inner.release_context();  // freed by delete_counted from now on
    const auto bytes = static_cast<std::int64_t>(n);
    std::memcpy(base, &bytes, sizeof bytes);
    add(bytes);
    return c10::DataPtr(base + kHeader, base + kHeader, &delete_counted, device);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &delete_counted; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* inner_;
};

std::once_flag g_once;
std::atomic<bool> g_installed{false};

}  // namespace

void install_cpu_tensor_counter() {
  std::call_once(g_once, [] {
    auto* inner = c10::GetAllocator(c10::DeviceType::CPU);
    // Only an allocator whose blocks free through one plain function can be wrapped.
    if (inner == nullptr || inner->raw_deleter() == nullptr) return;
    g_inner_delete = inner->raw_deleter();
    static CountingAllocator counter(inner);
    c10::SetAllocator(c10::DeviceType::CPU, &counter, /*priority=*/255);
    g_installed = true;
  });
}

bool cpu_tensor_counter_installed() { return g_installed; }
std::int64_t cpu_tensor_bytes() { return g_live.load(); }
std::int64_t cpu_tensor_peak() { return g_peak.load(); }
void reset_cpu_tensor_peak() { g_peak = g_live.load(); }

}  // namespace shardkit::train
