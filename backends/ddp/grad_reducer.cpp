// The ddp gradient reducer: readiness tracking, in-order bucket launches, averaging back into .grad().
#include "grad_reducer.hpp"

#include <algorithm>
#include <utility>

#include <shardkit/buckets.hpp>
#include <shardkit/error.hpp>
#include <shardkit/ledger.hpp>

namespace shardkit::ddp {

GradReducer::GradReducer(std::vector<ParamShard> params, CommGroup& group, ReducerOptions options)
    : params_(std::move(params)), group_(group), options_(options) {
  std::vector<BucketItem> items;
  for (const auto& p : params_) {
    if (p.param.device() != params_.front().param.device())
      throw RuntimeError("ddp keeps one device per process, but parameter '" + p.name + "' is on " +
                         p.param.device().str() + " and '" + params_.front().name + "' on " +
                         params_.front().param.device().str());
    items.push_back({p.param.numel() * static_cast<std::int64_t>(p.param.element_size()),
                     p.param.scalar_type()});
  }
  bucket_of_.resize(params_.size());
  for (auto& indices : plan_buckets(items, options_.bucket_cap_bytes)) {
    Bucket bucket;
    std::int64_t total = 0;
    for (auto i : indices) {
      bucket.offsets.push_back(total);
      total += params_[i].param.numel();
      bucket_of_[i] = buckets_.size();
    }
    const auto& first = params_[indices.front()].param;
    bucket.flat = torch::zeros({total}, torch::TensorOptions().dtype(first.scalar_type()).device(first.device()));
    bucket.params = std::move(indices);
    buckets_.push_back(std::move(bucket));
  }
  ready_.assign(params_.size(), 0);
  used_.assign(params_.size(), 0);
  reset_step();
  for (std::size_t i = 0; i < params_.size(); ++i)
    hooks_.push_back(on_grad_accumulated(params_[i].param, [this, i] { on_accumulated(i); }));
}

GradReducer::~GradReducer() { hooks_.clear(); }

std::vector<std::vector<std::size_t>> GradReducer::bucket_indices() const {
  std::vector<std::vector<std::size_t>> out;
  for (const auto& b : buckets_) out.push_back(b.params);
  return out;
}

void GradReducer::set_sync(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_ = enabled;
  end_queued_ = false;
}

void GradReducer::on_accumulated(std::size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  used_[index] = 1;
  if (!sync_) return;
  mark_ready(index);
  if (!options_.overlap) return;
  if (!end_queued_) {
    queue_backward_end([this] { on_backward_end(); });
    end_queued_ = true;
  }
  launch_ready_buckets();
}

void GradReducer::on_backward_end() {
  std::lock_guard<std::mutex> lock(mutex_);
  end_queued_ = false;
  if (!sync_) return;
  mark_leftovers_ready();
  launch_ready_buckets();
}

void GradReducer::mark_ready(std::size_t index) {
  auto& bucket = buckets_[bucket_of_[index]];
  if (ready_[index]) {
    if (bucket.work)
      throw RuntimeError("ddp: parameter '" + params_[index].name + "' received a gradient on rank " +
                         std::to_string(group_.rank()) +
                         " after its bucket was already all-reduced in this step; run one "
                         "backward per synchronised step (turn gradient sync off for the "
                         "earlier backward calls of a step)");
    return;
  }
  ready_[index] = 1;
  --bucket.pending;
}

void GradReducer::mark_leftovers_ready() {
  // Parameters whose gradients came in earlier, non-synchronised micro-steps are ready
  // (their .grad() holds the local sum); with find_unused every other one counts as zeros.
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i] && (used_[i] || options_.find_unused_parameters)) mark_ready(i);
}

void GradReducer::launch_ready_buckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0)
    launch(buckets_[next_launch_++]);
}

void GradReducer::launch(Bucket& bucket) {
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < bucket.params.size(); ++k) {
    const auto i = bucket.params[k];
    const auto& param = params_[i].param;
    auto slot = bucket.flat.narrow(0, bucket.offsets[k], param.numel());
    const auto& grad = param.grad();
    if (used_[i] && grad.defined())
      slot.view(param.sizes()).copy_(grad);
    else
      slot.zero_();
  }
  CollectiveScope scope("ddp, bucket " + std::to_string(&bucket - buckets_.data()));
  bucket.work = group_.all_reduce(bucket.flat, ReduceOp::Sum, /*async=*/true);
}

std::vector<std::string> GradReducer::missing_parameters() const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (!ready_[i]) names.push_back(params_[i].name);
  return names;
}

void GradReducer::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  end_queued_ = false;
  if (!sync_) return;
  try {
    mark_leftovers_ready();
    const auto missing = missing_parameters();
    if (!missing.empty()) {
      std::string list;
      const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
      for (std::size_t k = 0; k < shown; ++k) list += (k ? ", '" : "'") + missing[k] + "'";
      if (missing.size() > shown) list += " and " + std::to_string(missing.size() - shown) + " more";
      throw RuntimeError((missing.size() == 1 ? "parameter " : "parameters ") + list +
                         " received no gradient on rank " + std::to_string(group_.rank()) +
                         " in this backward; if the policy leaves parameters unused on purpose, "
                         "pass --accelerator.ddp.find_unused_parameters=true");
    }
    launch_ready_buckets();
    // Which parameters some rank used: the ones no rank used keep their .grad() as is.
    std::vector<char> used_somewhere(params_.size(), 1);
    if (options_.find_unused_parameters && !params_.empty()) {
      auto counts = torch::empty({static_cast<std::int64_t>(params_.size())}, torch::kFloat);
      auto* data = counts.data_ptr<float>();
      for (std::size_t i = 0; i < params_.size(); ++i) data[i] = used_[i] ? 1.0f : 0.0f;
      counts = counts.to(params_.front().param.device());
      CollectiveScope scope("ddp, unused parameters");
      group_.all_reduce(counts, ReduceOp::Sum)->wait();
      counts = counts.cpu();
      for (std::size_t i = 0; i < params_.size(); ++i)
        used_somewhere[i] = counts.data_ptr<float>()[i] > 0.5f;
    }
    torch::NoGradGuard no_grad;
    for (auto& bucket : buckets_) {
      bucket.work->wait();
      if (group_.size() > 1) bucket.flat.div_(group_.size());
      for (std::size_t k = 0; k < bucket.params.size(); ++k) {
        const auto i = bucket.params[k];
        if (!used_somewhere[i]) continue;
        auto& param = params_[i].param;
        const auto value = bucket.flat.narrow(0, bucket.offsets[k], param.numel()).view(param.sizes());
        auto& grad = param.mutable_grad();
        if (grad.defined())
          grad.copy_(value);
        else
          grad = value.clone();
      }
    }
  } catch (...) {
    reset_step();
    throw;
  }
  reset_step();
}

void GradReducer::reset_step() {
  std::fill(ready_.begin(), ready_.end(), 0);
  std::fill(used_.begin(), used_.end(), 0);
  for (auto& bucket : buckets_) {
    bucket.pending = bucket.params.size();
    bucket.work.reset();
  }
  next_launch_ = 0;
  end_queued_ = false;
}

}  // namespace shardkit::ddp
