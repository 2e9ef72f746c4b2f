// The non-virtual parts of the transport interface: destructors, names, store keys, CommInit.
#include <cstdlib>
#include <functional>
#include <string>

#include <torch/torch.h>

#include "shardkit/comm.hpp"
#include "shardkit/error.hpp"
#include "shardkit/runtime.hpp"

namespace shardkit {

Work::~Work() = default;
CommGroup::~CommGroup() = default;
Store::~Store() = default;
Comm::~Comm() = default;

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Avg: return "avg";
    case ReduceOp::Max: return "max";
  }
  return "?";
}

const char* to_string(CommOp op) {
  switch (op) {
    case CommOp::AllReduce: return "all_reduce";
    case CommOp::Broadcast: return "broadcast";
    case CommOp::AllGather: return "all_gather";
    case CommOp::ReduceScatter: return "reduce_scatter";
    case CommOp::Barrier: return "barrier";
  }
  return "?";
}

const char* to_string(Support support) {
  switch (support) {
    case Support::Native: return "native";
    case Support::Emulated: return "emulated";
    case Support::Unsupported: return "unsupported";
  }
  return "?";
}

namespace {
class CompletedWork final : public Work {
 public:
  void wait() override {}
};
}  // namespace

WorkHandle completed_work() {
  // Stateless, so one shared instance serves every caller.
  static const WorkHandle done = std::make_shared<CompletedWork>();
  return done;
}

namespace {
// Waits for a collective, then runs one local step after it (once).
class ThenWork final : public Work {
 public:
  ThenWork(WorkHandle inner, std::function<void()> then) : inner_(std::move(inner)), then_(std::move(then)) {}
  void wait() override {
    inner_->wait();
    if (!then_) return;
    then_();
    then_ = nullptr;  // done: a second wait() has nothing left to run
  }

 private:
  WorkHandle inner_;
  std::function<void()> then_;
};
}  // namespace

WorkHandle CommGroup::reduce_scatter_in_place(torch::Tensor& buffer, ReduceOp op, bool async) {
  if (size() == 1) return reduce_scatter(buffer, buffer, op, async);
  if (buffer.defined() && buffer.numel() % size() != 0)
    throw RuntimeError("reduce_scatter on group '" + name() + "' (rank " + std::to_string(rank()) + " of " +
                       std::to_string(size()) + "): the buffer holds " + std::to_string(buffer.numel()) +
                       " elements, which is not a multiple of the group's " + std::to_string(size()) + " members");
  const auto n = buffer.defined() ? buffer.numel() / size() : 0;
  auto output = torch::empty({n}, buffer.defined() ? buffer.options() : torch::TensorOptions());
  auto work = reduce_scatter(output, buffer, op, /*async=*/true);  // refuses a bad buffer, naming it
  auto chunk = buffer.view(-1).narrow(0, rank() * n, n);
  auto handle = std::make_shared<ThenWork>(std::move(work), [chunk, output]() mutable {
    torch::NoGradGuard no_grad;
    chunk.copy_(output);
  });
  if (!async) handle->wait();
  return handle;
}

namespace store_keys {
std::string arrived(int rank) { return "arrived/" + std::to_string(rank); }
}  // namespace store_keys

CommInit CommInit::from_runtime(const Runtime& runtime, double timeout_s) {
  CommInit init;
  init.rank = runtime.rank;
  init.world_size = runtime.world_size;
  init.master_addr = runtime.master_addr;
  init.master_port = runtime.master_port;
  init.use_agent_store = runtime.use_agent_store;
  init.restart_count = runtime.restart_count;
  init.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000.0));
  init.device = runtime.device;
  return init;
}

}  // namespace shardkit
