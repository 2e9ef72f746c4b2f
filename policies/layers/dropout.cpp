// Dropout with a counter-based keep bit per element (see shardkit/nn/dropout.hpp).
#include "shardkit/nn/dropout.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>

#include "shardkit/error.hpp"

namespace shardkit::nn {
namespace {

/// A bijective 32-bit mixer (Wellons' "lowbias32").
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// out[i] = keep(i) ? in[i] * scale : 0 for i in [begin, end), where keep(i) is whether the
/// hash of (seed, i) reaches `threshold`. The same function serves forward and backward.
template <typename T>
inline __attribute__((always_inline)) void masked_scale(const T* in, T* out, std::int64_t begin, std::int64_t end,
                                                        std::uint64_t seed, std::uint32_t threshold, float scale) {
  // Elements are counted in 2^32 blocks: the high half of the index goes into the block's key.
  for (std::int64_t block_start = begin; block_start < end;) {
    const auto high = static_cast<std::uint32_t>(static_cast<std::uint64_t>(block_start) >> 32);
    const std::int64_t block_end = std::min<std::int64_t>(end, (static_cast<std::int64_t>(high) + 1) << 32);
    const std::uint32_t key1 = mix32(static_cast<std::uint32_t>(seed) ^ mix32(high));
    const std::uint32_t key2 = mix32(static_cast<std::uint32_t>(seed >> 32) + 0x9e3779b9U);
    for (std::int64_t i = block_start; i < block_end; ++i) {
      const std::uint32_t h = mix32(mix32(static_cast<std::uint32_t>(i) ^ key1) + key2);
      out[i] = h >= threshold ? static_cast<T>(static_cast<float>(in[i]) * scale) : static_cast<T>(0);
    }
    block_start = block_end;
  }
}

/// The float32 loop, compiled for the widest vector unit the CPU has (chosen at load time).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void masked_scale_float(const float* in, float* out, std::int64_t begin, std::int64_t end, std::uint64_t seed,
                        std::uint32_t threshold, float scale) {
  masked_scale(in, out, begin, end, seed, threshold, scale);
}

template <typename T>
void masked_scale_any(const T* in, T* out, std::int64_t begin, std::int64_t end, std::uint64_t seed,
                      std::uint32_t threshold, float scale) {
  if constexpr (std::is_same_v<T, float>)
    masked_scale_float(in, out, begin, end, seed, threshold, scale);
  else
    masked_scale(in, out, begin, end, seed, threshold, scale);
}

torch::Tensor apply_mask(const torch::Tensor& input, std::uint64_t seed, double p) {
  const auto in = input.contiguous();
  auto out = torch::empty_like(in, torch::MemoryFormat::Contiguous);
  // Keep when the hash is at least p * 2^32: probability 1 - p, to 2^-32.
  const auto threshold = static_cast<std::uint32_t>(std::min(std::ldexp(p, 32), 4294967295.0));
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "shardkit_dropout", [&] {
    const auto* src = in.const_data_ptr<scalar_t>();
    auto* dst = out.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, in.numel(), 1 << 15, [&](std::int64_t begin, std::int64_t end) {
      masked_scale_any<scalar_t>(src, dst, begin, end, seed, threshold, scale);
    });
  });
  return out;
}

std::uint64_t draw_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

struct HashDropout : torch::autograd::Function<HashDropout> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double p) {
    const auto seed = draw_seed();
    ctx->saved_data["seed"] = static_cast<std::int64_t>(seed);
    ctx->saved_data["p"] = p;
    return apply_mask(x, seed, p);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto seed = static_cast<std::uint64_t>(ctx->saved_data["seed"].toInt());
    return {apply_mask(grads.at(0), seed, ctx->saved_data["p"].toDouble()), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
  if (!(p >= 0.0 && p <= 1.0))
    throw RuntimeError("dropout probability must be between 0 and 1, got " + std::to_string(p));
  if (!training || p == 0.0) return x;
  if (p == 1.0 || !x.device().is_cpu() || !x.is_floating_point() || x.numel() == 0)
    return torch::dropout(x, p, /*train=*/true);
  return HashDropout::apply(x, p);
}

DropoutImpl::DropoutImpl(double p) : p_(p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw RuntimeError("dropout probability must be between 0 and 1, got " + std::to_string(p));
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) { return shardkit::nn::dropout(x, p_, is_training()); }

}  // namespace shardkit::nn
