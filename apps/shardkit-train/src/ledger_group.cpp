// A CommGroup that records every collective of the group it wraps in the collective ledger.
#include "ledger.hpp"
#include "shardkit/error.hpp"

namespace shardkit::ledger {
namespace {

class LedgerWork final : public Work {
 public:
  LedgerWork(WorkHandle inner, std::shared_ptr<Ledger> ledger, std::uint64_t id)
      : inner_(std::move(inner)), ledger_(std::move(ledger)), id_(id) {}

  void wait() override {
    if (done_) return inner_->wait();  // the same result (or error) again
    done_ = true;
    ledger_->waiting(id_);
    try {
      inner_->wait();
    } catch (const RuntimeError& e) {
      ledger_->failed(id_, e.what());
    }
    ledger_->completed(id_);
  }

 private:
  WorkHandle inner_;
  std::shared_ptr<Ledger> ledger_;
  std::uint64_t id_;
  bool done_ = false;
};

class LedgerGroup final : public CommGroup {
 public:
  LedgerGroup(std::shared_ptr<CommGroup> inner, std::shared_ptr<Ledger> ledger)
      : inner_(std::move(inner)), ledger_(std::move(ledger)) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }

  WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool async) override {
    return run("all_reduce", &tensor, tensor.nbytes(), async, [&] { return inner_->all_reduce(tensor, op, true); });
  }
  WorkHandle broadcast(torch::Tensor& tensor, int root, bool async) override {
    return run("broadcast", &tensor, tensor.nbytes(), async, [&] { return inner_->broadcast(tensor, root, true); });
  }
  WorkHandle all_gather(torch::Tensor& output, const torch::Tensor& input, bool async) override {
    return run("all_gather", &input, output.nbytes(), async, [&] { return inner_->all_gather(output, input, true); });
  }
  WorkHandle reduce_scatter(torch::Tensor& output, const torch::Tensor& input, ReduceOp op,
                            bool async) override {
    return run("reduce_scatter", &input, input.nbytes(), async,
               [&] { return inner_->reduce_scatter(output, input, op, true); });
  }
  WorkHandle reduce_scatter_in_place(torch::Tensor& buffer, ReduceOp op, bool async) override {
    return run("reduce_scatter", &buffer, buffer.nbytes(), async,
               [&] { return inner_->reduce_scatter_in_place(buffer, op, true); });
  }
  void barrier() override {
    blocking("barrier", [&] {
      inner_->barrier();
      return 0;
    });
  }
  std::vector<std::string> all_gather_bytes(const std::string& mine) override {
    return blocking("all_gather_bytes", [&] { return inner_->all_gather_bytes(mine); });
  }
  Support supports(CommOp op, torch::ScalarType dtype) const override { return inner_->supports(op, dtype); }

 private:
  /// `payload`: the bytes of the whole tensor the collective makes (an all-gather's output).
  template <class F>
  WorkHandle run(const char* op, const torch::Tensor* tensor, std::size_t payload, bool async, F&& start) {
    if (ledger_->skip_for_test(name())) return completed_work();
    const auto id = ledger_->issue(name(), op, tensor, size(), static_cast<std::int64_t>(payload));
    WorkHandle work;
    try {
      work = start();
    } catch (const RuntimeError& e) {
      ledger_->failed(id, e.what());
    }
    auto handle = std::make_shared<LedgerWork>(std::move(work), ledger_, id);
    if (!async) handle->wait();
    return handle;
  }

  template <class F>
  auto blocking(const char* op, F&& call) -> decltype(call()) {
    const auto id = ledger_->issue(name(), op, nullptr, size(), 0);
    ledger_->waiting(id);
    try {
      auto result = call();
      ledger_->completed(id);
      return result;
    } catch (const RuntimeError& e) {
      ledger_->failed(id, e.what());
    }
  }

  std::shared_ptr<CommGroup> inner_;
  std::shared_ptr<Ledger> ledger_;
};

}  // namespace

std::shared_ptr<CommGroup> Ledger::wrap(std::shared_ptr<CommGroup> group) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& known = wrapped_[group.get()];
  if (auto existing = known.lock()) return existing;
  auto wrapped = std::make_shared<LedgerGroup>(std::move(group), shared_from_this());
  known = wrapped;
  return wrapped;
}

}  // namespace shardkit::ledger
