// Collectives on a ProcessGroupGloo: checks, the dtype/op emulations, and bounded waits.
#include "gloo_group.hpp"

#include <algorithm>
#include <cstring>

#include <torch/torch.h>

#include <shardkit/error.hpp>

#include "c10d_errors.hpp"
#include "dtype_support.hpp"

namespace shardkit::gloo {
namespace {

c10d::ReduceOp c10d_op(ReduceOp op) {
  // Gloo 1.13 refuses AVG ("Cannot use ReduceOp.AVG with Gloo"): sum, then divide.
  return op == ReduceOp::Max ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
}

void divide_in_place(torch::Tensor& tensor, int size) {
  if (at::isFloatingType(tensor.scalar_type())) tensor.div_(size);
  else tensor.div_(size, "trunc");
}

// The same bytes as a dtype Gloo moves (no copy).
torch::Tensor as_wire(const torch::Tensor& tensor) {
  const auto wire = wire_dtype(tensor.scalar_type());
  return wire == tensor.scalar_type() ? tensor : tensor.view(wire);
}

}  // namespace

GlooGroup::GlooGroup(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg,
                     std::shared_ptr<const GroupInfo> info)
    : pg_(std::move(pg)), info_(std::move(info)) {}

GlooGroup::~GlooGroup() = default;

Support GlooGroup::supports(CommOp op, torch::ScalarType dtype) const {
  return gloo_support(op, dtype);
}

void GlooGroup::misuse(CommOp op, const std::string& problem) const {
  throw RuntimeError(std::string("gloo ") + to_string(op) + " on group '" + info_->name +
                     "' (rank " + std::to_string(info_->rank) + " of " +
                     std::to_string(info_->size) + "): " + problem);
}

void GlooGroup::require(CommOp op, const torch::Tensor& tensor, const char* role) const {
  const std::string which = *role ? std::string("the ") + role + " tensor" : "the tensor";
  if (!tensor.defined()) misuse(op, which + " is undefined");
  if (!tensor.device().is_cpu())
    misuse(op, which + " is on " + tensor.device().str() +
                   "; gloo moves CPU tensors only (use the nccl comm plugin for CUDA tensors)");
  if (!tensor.is_contiguous()) misuse(op, which + " is not contiguous; pass a contiguous one");
  if (gloo_support(op, tensor.scalar_type()) == Support::Unsupported)
    throw RuntimeError(std::string("gloo does not support ") + to_string(op) + " on " +
                       dtype_name(tensor.scalar_type()));
}

WorkHandle GlooGroup::start(CommOp op,
                            const std::function<c10::intrusive_ptr<c10d::Work>()>& launch,
                            std::function<void()> finish, bool async) {
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = launch();
  } catch (...) {
    throw_collective_failure(*info_, to_string(op), current_message());
  }
  auto handle = std::make_shared<GlooWork>(info_, to_string(op), std::move(work), std::move(finish));
  if (!async) handle->wait();
  return handle;
}

WorkHandle GlooGroup::all_reduce(torch::Tensor& tensor, ReduceOp op, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::AllReduce, tensor, "");
  const auto dtype = tensor.scalar_type();
  const auto in = reduce_dtype(dtype);
  const bool widened = in != dtype;
  torch::Tensor reduced = widened ? tensor.to(in) : tensor;
  std::function<void()> finish;
  if (widened || op == ReduceOp::Avg) {
    finish = [tensor, reduced, widened, op, size = info_->size]() mutable {
      torch::NoGradGuard no_grad;
      if (op == ReduceOp::Avg) divide_in_place(reduced, size);
      if (widened) tensor.copy_(reduced);
    };
  }
  return start(CommOp::AllReduce, [&] {
    std::vector<torch::Tensor> tensors{reduced};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op);
    return pg_->allreduce(tensors, options);
  }, std::move(finish), async);
}

WorkHandle GlooGroup::broadcast(torch::Tensor& tensor, int root, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::Broadcast, tensor, "");
  if (root < 0 || root >= info_->size)
    misuse(CommOp::Broadcast, "root " + std::to_string(root) + " is not a member (0.." +
                                  std::to_string(info_->size - 1) + ")");
  return start(CommOp::Broadcast, [&] {
    std::vector<torch::Tensor> tensors{as_wire(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    options.rootTensor = 0;
    return pg_->broadcast(tensors, options);
  }, {}, async);
}

WorkHandle GlooGroup::all_gather(torch::Tensor& output, const torch::Tensor& input, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::AllGather, output, "output");
  const auto in = input.defined() ? input.contiguous() : input;
  require(CommOp::AllGather, in, "input");
  const auto n = in.numel();
  if (output.scalar_type() != in.scalar_type() || output.numel() != info_->size * n)
    misuse(CommOp::AllGather, "the output holds " + std::to_string(output.numel()) + " " +
                                  dtype_name(output.scalar_type()) + " elements; it needs " +
                                  std::to_string(info_->size) + " x " + std::to_string(n) +
                                  " " + dtype_name(in.scalar_type()));
  // Gloo 1.13 gathers into a list only (_allgather_base is refused): one view per member.
  const auto flat = as_wire(output).view(-1);
  std::vector<std::vector<torch::Tensor>> outputs(1);
  for (int r = 0; r < info_->size; ++r) outputs[0].push_back(flat.narrow(0, r * n, n).view(in.sizes()));
  return start(CommOp::AllGather, [&] {
    std::vector<torch::Tensor> inputs{as_wire(in)};
    return pg_->allgather(outputs, inputs);
  }, {}, async);
}

WorkHandle GlooGroup::reduce_scatter(torch::Tensor& output, const torch::Tensor& input,
                                     ReduceOp op, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::ReduceScatter, output, "output");
  require(CommOp::ReduceScatter, input, "input");
  const auto m = output.numel();
  if (output.scalar_type() != input.scalar_type() || input.numel() != info_->size * m)
    misuse(CommOp::ReduceScatter, "the input holds " + std::to_string(input.numel()) + " " +
                                      dtype_name(input.scalar_type()) + " elements; it needs " +
                                      std::to_string(info_->size) + " x " + std::to_string(m) +
                                      " " + dtype_name(output.scalar_type()));
  // Gloo 1.13 refuses reduce_scatter: all-reduce a copy of the whole input, keep our chunk.
  auto reduced = input.to(reduce_dtype(input.scalar_type()), /*non_blocking=*/false,
                          /*copy=*/true);
  auto finish = [output, reduced, op, m, rank = info_->rank, size = info_->size]() mutable {
    torch::NoGradGuard no_grad;
    auto chunk = reduced.view(-1).narrow(0, rank * m, m);
    if (op == ReduceOp::Avg) divide_in_place(chunk, size);
    output.view(-1).copy_(chunk);
  };
  return start(CommOp::ReduceScatter, [&] {
    std::vector<torch::Tensor> tensors{reduced};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op);
    return pg_->allreduce(tensors, options);
  }, std::move(finish), async);
}

void GlooGroup::barrier() {
  start(CommOp::Barrier, [&] { return pg_->barrier(); }, {}, false);
}

std::vector<std::string> GlooGroup::all_gather_bytes(const std::string& mine) {
  auto length = torch::full({1}, static_cast<std::int64_t>(mine.size()), torch::kLong);
  auto lengths = torch::empty({info_->size}, torch::kLong);
  all_gather(lengths, length, false);
  const auto* each = lengths.data_ptr<std::int64_t>();
  const auto longest = *std::max_element(each, each + info_->size);
  std::vector<std::string> all(info_->size);
  if (longest == 0) return all;
  auto padded = torch::zeros({longest}, torch::kByte);
  std::memcpy(padded.data_ptr<std::uint8_t>(), mine.data(), mine.size());
  auto gathered = torch::empty({info_->size * longest}, torch::kByte);
  all_gather(gathered, padded, false);
  const auto* bytes = reinterpret_cast<const char*>(gathered.data_ptr<std::uint8_t>());
  for (int r = 0; r < info_->size; ++r) all[r].assign(bytes + r * longest, each[r]);
  return all;
}

}  // namespace shardkit::gloo
