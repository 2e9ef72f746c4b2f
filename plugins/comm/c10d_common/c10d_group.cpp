// Collectives on a c10d Backend: argument checks, the dtype table's emulations, and bounded waits.
#include "c10d_group.hpp"

#include <algorithm>
#include <cstring>

#include <torch/torch.h>

#include <shardkit/error.hpp>

#include "c10d_errors.hpp"
#include "dtype_table.hpp"

namespace shardkit::c10d_common {
namespace {

// AVG is the transport's own on floating dtypes; integers sum, then divide locally.
c10d::ReduceOp c10d_op(ReduceOp op, torch::ScalarType dtype) {
  switch (op) {
    case ReduceOp::Max: return c10d::ReduceOp::MAX;
    case ReduceOp::Avg:
      return at::isFloatingType(dtype) ? c10d::ReduceOp::AVG : c10d::ReduceOp::SUM;
    case ReduceOp::Sum: break;
  }
  return c10d::ReduceOp::SUM;
}

bool divides_locally(ReduceOp op, torch::ScalarType dtype) {
  return op == ReduceOp::Avg && !at::isFloatingType(dtype);
}

}  // namespace

Support support_from_traits(const TransportTraits& traits, CommOp op, torch::ScalarType dtype) {
  torch::ScalarType via = dtype;
  switch (op) {
    case CommOp::Barrier: return Support::Native;
    case CommOp::AllReduce:
    case CommOp::ReduceScatter: via = reduce_dtype(dtype); break;
    case CommOp::Broadcast:
    case CommOp::AllGather: via = wire_dtype(dtype, traits.moves_bool); break;
  }
  if (via == torch::ScalarType::Undefined) return Support::Unsupported;
  return via == dtype ? Support::Native : Support::Emulated;
}

C10dGroup::C10dGroup(c10::intrusive_ptr<c10d::Backend> backend,
                     std::shared_ptr<const GroupInfo> info, const TransportTraits& traits,
                     torch::Device device)
    : backend_(std::move(backend)), info_(std::move(info)), traits_(traits), device_(device) {}

C10dGroup::~C10dGroup() = default;

Support C10dGroup::supports(CommOp op, torch::ScalarType dtype) const {
  return support_from_traits(traits_, op, dtype);
}

void C10dGroup::misuse(CommOp op, const std::string& problem) const {
  throw RuntimeError(traits_.name + " " + to_string(op) + " on group '" + info_->name +
                     "' (rank " + std::to_string(info_->rank) + " of " +
                     std::to_string(info_->size) + "): " + problem);
}

void C10dGroup::require(CommOp op, const torch::Tensor& tensor, const char* role) const {
  const std::string which = *role ? std::string("the ") + role + " tensor" : "the tensor";
  if (!tensor.defined()) misuse(op, which + " is undefined");
  if (tensor.device().type() != traits_.device_type)
    misuse(op, which + " is on " + tensor.device().str() + "; " + traits_.name + " moves " +
                   c10::DeviceTypeName(traits_.device_type, /*lower_case=*/true) +
                   " tensors only (" + traits_.wrong_device_hint + ")");
  if (!tensor.is_contiguous()) misuse(op, which + " is not contiguous; pass a contiguous one");
  if (supports(op, tensor.scalar_type()) == Support::Unsupported)
    throw RuntimeError(traits_.name + " does not support " + to_string(op) + " on " +
                       dtype_name(tensor.scalar_type()));
}

void C10dGroup::require_size_times(CommOp op, const char* role, const torch::Tensor& whole,
                                   const torch::Tensor& part) const {
  if (whole.scalar_type() != part.scalar_type() || whole.numel() != info_->size * part.numel())
    misuse(op, std::string("the ") + role + " holds " + std::to_string(whole.numel()) + " " +
                   dtype_name(whole.scalar_type()) + " elements; it needs " +
                   std::to_string(info_->size) + " x " + std::to_string(part.numel()) + " " +
                   dtype_name(part.scalar_type()));
}

WorkHandle C10dGroup::start(CommOp op,
                            const std::function<c10::intrusive_ptr<c10d::Work>()>& launch,
                            std::function<void()> finish, bool async) {
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = launch();
  } catch (...) {
    throw_collective_failure(*info_, to_string(op), current_message());
  }
  auto handle = std::make_shared<C10dWork>(info_, to_string(op), traits_.wait_kind,
                                           std::move(work), std::move(finish));
  if (!async) handle->wait();
  return handle;
}

WorkHandle C10dGroup::all_reduce(torch::Tensor& tensor, ReduceOp op, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::AllReduce, tensor, "");
  const auto dtype = tensor.scalar_type();
  const auto in = reduce_dtype(dtype);
  const bool widened = in != dtype;
  torch::Tensor reduced = widened ? tensor.to(in) : tensor;
  std::function<void()> finish;
  if (widened || divides_locally(op, in)) {
    finish = [tensor, reduced, widened, op, in, size = info_->size]() mutable {
      torch::NoGradGuard no_grad;
      if (divides_locally(op, in)) reduced.div_(size, "trunc");
      if (widened) tensor.copy_(reduced);
    };
  }
  return start(CommOp::AllReduce, [&] {
    std::vector<torch::Tensor> tensors{reduced};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op, in);
    return backend_->allreduce(tensors, options);
  }, std::move(finish), async);
}

WorkHandle C10dGroup::broadcast(torch::Tensor& tensor, int root, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::Broadcast, tensor, "");
  if (root < 0 || root >= info_->size)
    misuse(CommOp::Broadcast, "root " + std::to_string(root) + " is not a member (0.." +
                                  std::to_string(info_->size - 1) + ")");
  return start(CommOp::Broadcast, [&] {
    std::vector<torch::Tensor> tensors{tensor.view(wire_dtype(tensor.scalar_type(), traits_.moves_bool))};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    options.rootTensor = 0;
    return backend_->broadcast(tensors, options);
  }, {}, async);
}

WorkHandle C10dGroup::all_gather(torch::Tensor& output, const torch::Tensor& input, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::AllGather, output, "output");
  const auto in = input.defined() ? input.contiguous() : input;
  require(CommOp::AllGather, in, "input");
  require_size_times(CommOp::AllGather, "output", output, in);
  const auto wire = wire_dtype(in.scalar_type(), traits_.moves_bool);
  return start(CommOp::AllGather, [&] {
    auto flat_out = output.view(wire).view(-1);
    auto flat_in = in.view(wire).view(-1);
    return backend_->all_gather_single(flat_out, flat_in);
  }, {}, async);
}

WorkHandle C10dGroup::reduce_scatter(torch::Tensor& output, const torch::Tensor& input,
                                     ReduceOp op, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::ReduceScatter, output, "output");
  require(CommOp::ReduceScatter, input, "input");
  require_size_times(CommOp::ReduceScatter, "input", input, output);
  const auto m = output.numel();
  const auto dtype = input.scalar_type();
  const auto in = reduce_dtype(dtype);
  const bool widened = in != dtype;
  auto send = widened ? input.reshape(-1).to(in) : input.view(-1);
  auto receive = widened ? torch::empty({m}, output.options().dtype(in)) : output.view(-1);
  std::function<void()> finish;
  if (widened || divides_locally(op, in)) {
    finish = [output, receive, widened, op, in, size = info_->size]() mutable {
      torch::NoGradGuard no_grad;
      if (divides_locally(op, in)) receive.div_(size, "trunc");
      if (widened) output.view(-1).copy_(receive);
    };
  }
  return start(CommOp::ReduceScatter, [&] {
    c10d::ReduceScatterOptions options;
    options.reduceOp = c10d_op(op, in);
    return backend_->reduce_scatter_single(receive, send, options);
  }, std::move(finish), async);
}

WorkHandle C10dGroup::reduce_scatter_in_place(torch::Tensor& buffer, ReduceOp op, bool async) {
  torch::NoGradGuard no_grad;
  require(CommOp::ReduceScatter, buffer, "buffer");
  const auto size = info_->size;
  if (buffer.numel() % size != 0)
    misuse(CommOp::ReduceScatter, "the buffer holds " + std::to_string(buffer.numel()) +
                                      " elements, which is not a multiple of the group's " +
                                      std::to_string(size) + " members");
  const auto dtype = buffer.scalar_type();
  // A widened dtype is reduced in a copy anyway; the general path makes it.
  if (reduce_dtype(dtype) != dtype) return CommGroup::reduce_scatter_in_place(buffer, op, async);
  const auto n = buffer.numel() / size;
  auto flat = buffer.view(-1);
  // NCCL reduce-scatters in place when the output is this rank's chunk of the input.
  if (!traits_.reduce_scatter_is_all_reduce) {
    auto chunk = flat.narrow(0, info_->rank * n, n);
    return reduce_scatter(chunk, flat, op, async);
  }
  std::function<void()> finish;
  if (op == ReduceOp::Avg) {  // summed on the wire; only this member's chunk is divided
    finish = [chunk = flat.narrow(0, info_->rank * n, n), size]() mutable {
      torch::NoGradGuard no_grad;
      if (at::isFloatingType(chunk.scalar_type()))
        chunk.div_(size);
      else
        chunk.div_(size, "trunc");
    };
  }
  return start(CommOp::ReduceScatter, [&] {
    std::vector<torch::Tensor> tensors{flat};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d_op(op == ReduceOp::Avg ? ReduceOp::Sum : op, dtype);
    return backend_->allreduce(tensors, options);
  }, std::move(finish), async);
}

void C10dGroup::barrier() {
  start(CommOp::Barrier, [&] { return backend_->barrier(); }, {}, false);
}

std::vector<std::string> C10dGroup::all_gather_bytes(const std::string& mine) {
  const auto on_device = torch::TensorOptions().device(device_);
  auto length = torch::full({1}, static_cast<std::int64_t>(mine.size()), torch::kLong).to(device_);
  auto lengths = torch::empty({info_->size}, on_device.dtype(torch::kLong));
  all_gather(lengths, length, false);
  const auto host_lengths = lengths.cpu();
  const auto* each = host_lengths.data_ptr<std::int64_t>();
  const auto longest = *std::max_element(each, each + info_->size);
  std::vector<std::string> all(info_->size);
  if (longest == 0) return all;
  auto padded = torch::zeros({longest}, torch::kByte);
  std::memcpy(padded.data_ptr<std::uint8_t>(), mine.data(), mine.size());
  auto gathered = torch::empty({info_->size * longest}, on_device.dtype(torch::kByte));
  all_gather(gathered, padded.to(device_), false);
  const auto host = gathered.cpu();
  const auto* bytes = reinterpret_cast<const char*>(host.data_ptr<std::uint8_t>());
  for (int r = 0; r < info_->size; ++r) all[r].assign(bytes + r * longest, each[r]);
  return all;
}

}  // namespace shardkit::c10d_common
