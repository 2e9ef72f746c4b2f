// comm_worker's op x dtype checks: every collective on every dtype, with values known in advance.
#include "scenarios.hpp"

#include <torch/torch.h>

#include "checks.hpp"

namespace comm_worker {
namespace {

using shardkit::CommGroup;
using shardkit::ReduceOp;
using shardkit::Support;

/// What the gloo plugin must report, written here independently of the plugin's table.
struct DtypeCase {
  torch::ScalarType dtype;
  const char* name;
  Support all_reduce, reduce_scatter, broadcast, all_gather;
};

constexpr Support N = Support::Native, E = Support::Emulated, U = Support::Unsupported;
// Gloo 2.15 reduces and moves these itself (AVG included on floating dtypes; all-gather and
// reduce-scatter into one tensor natively); int16 goes through int32/float16 copies; bool
// moves but never reduces; complex is refused.
const DtypeCase kCases[] = {
    {torch::kFloat, "float32", N, N, N, N},  {torch::kDouble, "float64", N, N, N, N},
    {torch::kHalf, "float16", N, N, N, N},   {torch::kBFloat16, "bfloat16", N, N, N, N},
    {torch::kInt, "int32", N, N, N, N},      {torch::kLong, "int64", N, N, N, N},
    {torch::kShort, "int16", E, E, E, E},    {torch::kChar, "int8", N, N, N, N},
    {torch::kByte, "uint8", N, N, N, N},     {torch::kBool, "bool", U, U, N, N},
    {torch::kComplexFloat, "complex64", U, U, U, U},
};

std::string label(const CommGroup& g, const std::string& op, const DtypeCase& c) {
  return "rank " + std::to_string(g.rank()) + " of " + std::to_string(g.size()) + ": " + op +
         " on " + c.name;
}

torch::Tensor filled(std::vector<std::int64_t> shape, double value, torch::ScalarType dtype) {
  return torch::full(shape, value, torch::kDouble).to(dtype);
}

void check_supports(CommGroup& g, const DtypeCase& c) {
  using shardkit::CommOp;
  const std::pair<CommOp, Support> expected[] = {
      {CommOp::AllReduce, c.all_reduce}, {CommOp::ReduceScatter, c.reduce_scatter},
      {CommOp::Broadcast, c.broadcast},  {CommOp::AllGather, c.all_gather},
      {CommOp::Barrier, N}};
  for (const auto& [op, support] : expected)
    expect(g.supports(op, c.dtype) == support,
           label(g, std::string("supports(") + shardkit::to_string(op) + ")", c) + " is " +
               shardkit::to_string(g.supports(op, c.dtype)) + ", expected " +
               shardkit::to_string(support));
}

void check_all_reduce(CommGroup& g, const DtypeCase& c) {
  const int n = g.size(), r = g.rank();
  if (c.all_reduce == U) {
    auto t = torch::ones({3}, c.dtype);
    expect_throws([&] { g.all_reduce(t, ReduceOp::Sum); },
                  std::string("gloo does not support all_reduce on ") + c.name, label(g, "all_reduce", c));
    return;
  }
  auto t = filled({5}, r + 1, c.dtype);
  g.all_reduce(t, ReduceOp::Sum);
  expect_equal(t, filled({5}, n * (n + 1) / 2, c.dtype), label(g, "all_reduce sum", c));
  t = filled({5}, r + 1, c.dtype);
  g.all_reduce(t, ReduceOp::Max);
  expect_equal(t, filled({5}, n, c.dtype), label(g, "all_reduce max", c));
  // Sum 2 + 4 + ... + 2n = n(n+1): the average n+1 is exact in every dtype.
  t = filled({2, 3}, 2 * (r + 1), c.dtype);
  g.all_reduce(t, ReduceOp::Avg, /*async=*/true)->wait();
  expect(t.scalar_type() == c.dtype, label(g, "all_reduce avg keeps the dtype", c));
  expect_equal(t, filled({2, 3}, n + 1, c.dtype), label(g, "all_reduce avg", c));
}

void check_broadcast(CommGroup& g, const DtypeCase& c) {
  const int root = g.size() - 1;
  const auto values = c.dtype == torch::kBool ? torch::arange(6).remainder(2).to(torch::kBool)
                                              : torch::arange(6).to(c.dtype);
  auto t = g.rank() == root ? values.clone() : torch::zeros({6}, c.dtype);
  if (c.broadcast == U) {
    expect_throws([&] { g.broadcast(t, root); },
                  std::string("gloo does not support broadcast on ") + c.name, label(g, "broadcast", c));
    return;
  }
  g.broadcast(t, root);
  expect_equal(t, values, label(g, "broadcast", c));
}

void check_all_gather(CommGroup& g, const DtypeCase& c) {
  const int n = g.size(), r = g.rank();
  auto input = c.dtype == torch::kBool ? torch::full({2, 3}, r % 2 == 0, torch::kBool)
                                       : filled({2, 3}, r + 1, c.dtype);
  auto output = torch::zeros({n, 2, 3}, c.dtype);
  if (c.all_gather == U) {
    expect_throws([&] { g.all_gather(output, input); },
                  std::string("gloo does not support all_gather on ") + c.name, label(g, "all_gather", c));
    return;
  }
  g.all_gather(output, input);
  for (int q = 0; q < n; ++q) {
    auto expected = c.dtype == torch::kBool ? torch::full({2, 3}, q % 2 == 0, torch::kBool)
                                            : filled({2, 3}, q + 1, c.dtype);
    expect_equal(output[q], expected, label(g, "all_gather chunk " + std::to_string(q), c));
  }
}

void check_reduce_scatter(CommGroup& g, const DtypeCase& c) {
  const int n = g.size(), r = g.rank();
  // Rank q holds arange(4n) + q; chunk r of the sum is n*(arange(4) + 4r) + n(n-1)/2.
  const auto input = (torch::arange(4 * n, torch::kDouble) + r).to(c.dtype);
  const auto base = torch::arange(4, torch::kDouble) + 4 * r;
  auto output = torch::zeros({4}, c.dtype);
  if (c.reduce_scatter == U) {
    expect_throws([&] { g.reduce_scatter(output, input, ReduceOp::Sum); },
                  std::string("gloo does not support reduce_scatter on ") + c.name,
                  label(g, "reduce_scatter", c));
    auto buffer = input.clone();
    expect_throws([&] { g.reduce_scatter_in_place(buffer, ReduceOp::Sum); },
                  std::string("gloo does not support reduce_scatter on ") + c.name,
                  label(g, "reduce_scatter_in_place", c));
    return;
  }
  g.reduce_scatter(output, input, ReduceOp::Sum);
  expect_equal(output, base * n + n * (n - 1) / 2, label(g, "reduce_scatter sum", c));
  g.reduce_scatter(output, input, ReduceOp::Max);
  expect_equal(output, base + (n - 1), label(g, "reduce_scatter max", c));
  g.reduce_scatter(output, input, ReduceOp::Avg, /*async=*/true)->wait();
  const double mean_offset = torch::isFloatingType(c.dtype) ? (n - 1) / 2.0 : (n - 1) / 2;
  expect_equal(output, base + mean_offset, label(g, "reduce_scatter avg", c));
  expect_equal(input, (torch::arange(4 * n, torch::kDouble) + r),
               label(g, "reduce_scatter leaves its input alone", c));
  // In place: this rank's chunk of the buffer receives what `output` received above.
  const auto chunk_of = [&](const torch::Tensor& buffer) { return buffer.narrow(0, 4 * r, 4); };
  auto buffer = input.clone();
  g.reduce_scatter_in_place(buffer, ReduceOp::Sum);
  expect_equal(chunk_of(buffer), base * n + n * (n - 1) / 2, label(g, "reduce_scatter_in_place sum", c));
  buffer = input.clone();
  g.reduce_scatter_in_place(buffer, ReduceOp::Max);
  expect_equal(chunk_of(buffer), base + (n - 1), label(g, "reduce_scatter_in_place max", c));
  buffer = input.clone();
  g.reduce_scatter_in_place(buffer, ReduceOp::Avg, /*async=*/true)->wait();
  expect_equal(chunk_of(buffer), base + mean_offset, label(g, "reduce_scatter_in_place avg", c));
}

void check_misuse(CommGroup& g) {
  auto wide = torch::zeros({4, 4});
  auto strided = wide.t();
  expect_throws([&] { g.all_reduce(strided, ReduceOp::Sum); }, "not contiguous",
                "all_reduce of a transposed tensor");
  auto small = torch::zeros({g.size() * 3 - 1});
  expect_throws([&] { g.all_gather(small, torch::ones({3})); }, "it needs",
                "all_gather into a too-small output");
  auto out = torch::zeros({2});
  expect_throws([&] { g.reduce_scatter(out, torch::ones({g.size() * 2 + 1}), ReduceOp::Sum); },
                "it needs", "reduce_scatter of a wrong-sized input");
  if (g.size() > 1) {
    auto odd = torch::ones({g.size() * 2 + 1});
    expect_throws([&] { g.reduce_scatter_in_place(odd, ReduceOp::Sum); }, "not a multiple",
                  "reduce_scatter_in_place of a buffer that does not split evenly");
  }
  auto t = torch::zeros({2});
  expect_throws([&] { g.broadcast(t, g.size()); }, "not a member", "broadcast from a non-member root");
}

}  // namespace

void check_every_dtype(CommGroup& group) {
  for (const auto& c : kCases) {
    check_supports(group, c);
    check_all_reduce(group, c);
    check_broadcast(group, c);
    check_all_gather(group, c);
    check_reduce_scatter(group, c);
  }
  check_misuse(group);
}

}  // namespace comm_worker
