// A sharding unit's layout, gather, release and gradient reduction.
#include "unit.hpp"

#include <algorithm>

#include "param_storage.hpp"
#include "shardkit/error_text.hpp"
#include "shardkit/error.hpp"
#include "shardkit/ledger.hpp"

namespace shardkit::shard {
namespace {

std::int64_t rows_of(const UnitParam& p) { return p.shape.empty() ? 1 : p.shape[0]; }
std::int64_t row_numel(const UnitParam& p) {
  const auto rows = rows_of(p);
  if (rows > 0) return p.numel / rows;
  std::int64_t n = 1;
  for (std::size_t d = 1; d < p.shape.size(); ++d) n *= p.shape[d];
  return n;
}
}  // namespace

RowPiece row_piece(std::int64_t rows, std::int64_t S, std::int64_t k) {
  const auto per_rank = (rows + S - 1) / S;
  const auto first = std::min(k * per_rank, rows);
  return {first, std::min(per_rank, rows - first)};
}

namespace {

std::int64_t rows_held(const UnitParam& p, std::int64_t S, std::int64_t k) { return row_piece(rows_of(p), S, k).count; }

}  // namespace

Unit::Unit(std::string name, std::vector<std::pair<std::vector<std::string>, torch::Tensor>> params,
           ShardStyle style, CommGroup& shard_group, bool persistent, std::optional<torch::ScalarType> compute,
           std::optional<torch::ScalarType> reduce, bool offload)
    : name_(std::move(name)), style_(style), group_(shard_group), persistent_(persistent), compute_(compute),
      reduce_(reduce) {
  for (auto& [names, tensor] : params) {
    UnitParam p;
    p.names = std::move(names);
    p.full = tensor;
    p.shape = tensor.sizes().vec();
    p.numel = tensor.numel();
    p.trainable = tensor.requires_grad();
    if (!params_.empty() && tensor.scalar_type() != params_.front().full.scalar_type())
      throw RuntimeError("unit '" + name_ + "' mixes parameter dtypes (" + p.names.front() + " is " +
                         std::string(c10::toString(tensor.scalar_type())) + ", " + params_.front().names.front() +
                         " is " + std::string(c10::toString(params_.front().full.scalar_type())) +
                         "); a unit's parameters share one flat buffer and must have one dtype");
    if (!persistent_) require_own_storage(p.names.front(), tensor);
    params_.push_back(std::move(p));
  }
  if (params_.empty()) throw RuntimeError("unit '" + name_ + "' has no parameters");
  device_ = params_.front().full.device();
  offload_ = offload && device_.is_cuda();  // on the CPU there is nothing to offload
  // The whole parameters can hold the shard when they stay in the masters' dtype and each owns
  // its storage (their memory is then moved into one flat buffer).
  in_place_ = persistent_ && style == ShardStyle::Flat && !offload_ &&
              (!compute_ || *compute_ == params_.front().full.scalar_type()) &&
              std::all_of(params_.begin(), params_.end(), [](const UnitParam& p) { return owns_storage(p.full); });
  lay_out(style);
}

void Unit::lay_out(ShardStyle style) {
  const std::int64_t S = group_.size(), r = group_.rank();
  for (auto& p : params_) {
    p.flat_offset = total_;
    total_ += p.numel;
  }
  if (style == ShardStyle::Rows) {
    for (auto& p : params_) {
      p.rows_per_rank = (rows_of(p) + S - 1) / S;
      p.shard_span = p.rows_per_rank * row_numel(p);
      p.shard_offset = shard_len_;
      shard_len_ += p.shard_span;
    }
  } else {
    shard_len_ = (total_ + S - 1) / S;
  }
  const auto& first = params_.front().full;
  if (in_place_) {
    whole_ = torch::zeros({S * shard_len_}, first.options().requires_grad(false));
    shard_ = whole_.narrow(0, r * shard_len_, shard_len_);
  } else {
    // Offloaded: pinned, so that the copies to and from the GPU are DMA transfers.
    shard_ = torch::zeros({shard_len_}, first.options().requires_grad(false).device(offload_ ? torch::Device(torch::kCPU)
                                                                                                : device_)
                                            .pinned_memory(offload_));
  }
  for (auto& p : params_) {
    if (style == ShardStyle::Rows) {
      const auto piece = row_piece(rows_of(p), S, r);
      const auto rows = piece.count;
      auto local_shape = p.shape;
      if (local_shape.empty()) {
        if (rows == 0) local_shape = {0};
      } else {
        local_shape[0] = rows;
      }
      p.local = shard_.narrow(0, p.shard_offset, rows * row_numel(p)).view(local_shape);
      p.layout = ShardLayout::rows(p.shape, piece.first, rows);
    } else {
      const auto begin = std::max(p.flat_offset, r * shard_len_);
      const auto end = std::min(p.flat_offset + p.numel, (r + 1) * shard_len_);
      if (begin < end) {
        p.shard_offset = begin - r * shard_len_;
        p.local = shard_.narrow(0, p.shard_offset, end - begin);
        p.layout = ShardLayout::flat_range(p.shape, begin - p.flat_offset, end - p.flat_offset);
      } else {
        p.shard_offset = 0;
        p.local = shard_.narrow(0, 0, 0);
        p.layout = ShardLayout::flat_range(p.shape, 0, 0);
      }
    }
  }
  // Rows: frozen parameters' pieces are left out of reductions. Flat ranges cut across
  // parameters, so a Flat unit reduces its whole shard.
  for (auto& p : params_) {
    p.reduce_offset = style == ShardStyle::Rows ? reduce_len_ : p.shard_offset;
    if (style == ShardStyle::Rows && p.trainable) reduce_len_ += p.shard_span;
  }
  if (style != ShardStyle::Rows) reduce_len_ = shard_len_;
  std::int64_t reduced = style == ShardStyle::Rows ? 0 : total_;
  for (const auto& p : params_)
    if (style == ShardStyle::Rows && p.trainable) reduced += p.numel;
  reduce_padding_ = group_.size() * reduce_len_ - reduced;
}

void Unit::shard_from_whole() {
  torch::NoGradGuard no_grad;
  if (in_place_) {
    // The whole parameters move into the flat buffer (their own memory is freed), which holds
    // this rank's shard.
    for (auto& p : params_) {
      whole_.narrow(0, p.flat_offset, p.numel).copy_(p.full.detach().reshape({-1}));
      point_storage(p.full, whole_, p.flat_offset);
    }
    return;
  }
  const std::int64_t r = group_.rank();
  for (auto& p : params_) {
    // A rank whose piece starts past the parameter's end holds nothing of it (torch.chunk:
    // the last ranks may get empty pieces), and narrowing there would be out of range.
    if (p.local.numel() == 0) continue;
    try {
      const auto flat = p.full.detach().reshape({-1});
      if (style_ == ShardStyle::Rows)
        p.local.view({-1}).copy_(flat.narrow(0, r * p.shard_span, p.local.numel()));
      else
        p.local.copy_(flat.narrow(0, r * shard_len_ + p.shard_offset - p.flat_offset, p.local.numel()));
    } catch (const c10::Error& e) {
      throw RuntimeError("sharding parameter '" + p.names.front() + "' " + c10::str(p.full.sizes()) + " of unit '" +
                         name_ + "' over " + std::to_string(group_.size()) + " shards failed: " +
                         first_line(e.what_without_backtrace()));
    }
  }
  // Mixed precision: the module computes with parameters of the compute dtype (same tensors).
  if (compute_ && *compute_ != shard_.scalar_type())
    for (auto& p : params_)
      if (p.full.scalar_type() != *compute_) p.full.set_data(p.full.detach().to(*compute_));
  if (!persistent_) {
    for (auto& p : params_) release_storage(p.full);
    whole_ = torch::Tensor();
    gathered_ = false;
  }
}

void Unit::start_gather() {
  if (gathered_ || gather_work_) return;
  Stopwatch watch(times_.issue);
  const auto padding = group_.size() * shard_len_ - total_;
  if (in_place_) {  // this rank's range of the buffer is the input
    CollectiveScope scope(label_);
    CollectivePadding padded(padding * shard_.element_size());
    gather_work_ = group_.all_gather(whole_, shard_, /*async=*/true);
    return;
  }
  // On the compute device, in the compute dtype (no copy when the shard already is both).
  gather_input_ = shard_.to(device_, compute_.value_or(shard_.scalar_type()), /*non_blocking=*/offload_);
  gathered_buffer_ = torch::empty({group_.size() * shard_len_}, gather_input_.options());
  CollectiveScope scope(label_);
  CollectivePadding padded(padding * gather_input_.element_size());
  gather_work_ = group_.all_gather(gathered_buffer_, gather_input_, /*async=*/true);
}

void Unit::copy_out(const torch::Tensor& gathered, const torch::Tensor& whole) const {
  const std::int64_t S = group_.size();
  for (const auto& p : params_) {
    const auto per_row = row_numel(p);
    for (std::int64_t k = 0; k < S; ++k) {
      const auto n = rows_held(p, S, k) * per_row;
      if (n == 0) continue;
      whole.narrow(0, p.flat_offset + k * p.shard_span, n)
          .copy_(gathered.narrow(0, k * shard_len_ + p.shard_offset, n));
    }
  }
}

torch::Tensor Unit::finish_gather() {
  start_gather();
  auto work = std::move(gather_work_);
  {
    Stopwatch watch(times_.gather_wait);
    work->wait();
  }
  gather_input_ = torch::Tensor();
  auto gathered = std::move(gathered_buffer_);
  gathered_buffer_ = torch::Tensor();
  if (style_ == ShardStyle::Flat) return gathered;  // the parameters lie end to end already
  torch::NoGradGuard no_grad;
  Stopwatch watch(times_.copies);
  auto whole = torch::empty({total_}, gathered.options());
  copy_out(gathered, whole);
  return whole;
}

void Unit::unshard() {
  if (gathered_) return;
  whole_ = finish_gather();
  if (!persistent_)
    for (auto& p : params_) point_storage(p.full, whole_, p.flat_offset);
  gathered_ = true;
}

void Unit::reshard() {
  if (persistent_) return;
  if (gather_work_) {
    Stopwatch watch(times_.gather_wait);
    gather_work_->wait();
    gather_work_.reset();
    gathered_buffer_ = gather_input_ = torch::Tensor();
  }
  if (!gathered_) return;
  for (auto& p : params_) release_storage(p.full);
  whole_ = torch::Tensor();
  gathered_ = false;
}

void Unit::add_gradient(const UnitParam& p, const torch::Tensor& input) const {
  const auto& grad = p.full.grad();
  if (!grad.defined()) return;
  const auto flat = grad.reshape({-1});
  // Added, not copied: a parameter whose gradient was accumulated twice in one backward (used
  // inside and outside a re-entrant checkpointed region) is taken twice.
  if (style_ == ShardStyle::Flat) {
    input.narrow(0, p.flat_offset, p.numel).add_(flat);
    return;
  }
  if (!p.trainable) return;  // no gradient to reduce (and no room for one in the segment)
  const std::int64_t S = group_.size();
  const auto per_row = row_numel(p);
  for (std::int64_t k = 0; k < S; ++k) {
    const auto n = rows_held(p, S, k) * per_row;
    if (n == 0) continue;
    input.narrow(0, k * reduce_len_ + p.reduce_offset, n).add_(flat.narrow(0, k * p.shard_span, n));
  }
}

torch::Tensor& Unit::reduce_input() {
  if (!reduce_input_.defined())
    reduce_input_ = torch::zeros({group_.size() * reduce_len_}, shard_.options()
                                                                    .device(device_)
                                                                    .pinned_memory(false)
                                                                    .dtype(reduce_.value_or(shard_.scalar_type())));
  return reduce_input_;
}

void Unit::take_gradient(std::size_t index) {
  if (reduce_work_)
    throw RuntimeError("unit '" + name_ + "': a gradient arrived while the unit's reduction was in flight");
  auto& p = params_.at(index);
  if (!p.full.grad().defined()) return;
  torch::NoGradGuard no_grad;
  Stopwatch watch(times_.copies);
  add_gradient(p, reduce_input());
  p.full.mutable_grad() = torch::Tensor();
}

void Unit::start_reduce(bool scatter) {
  if (reduce_work_)
    throw RuntimeError("unit '" + name_ + "': a second gradient reduction started before the first finished");
  torch::NoGradGuard no_grad;
  {
    Stopwatch watch(times_.copies);
    auto& input = reduce_input();
    for (const auto& p : params_) add_gradient(p, input);  // what take_gradient() has not moved
  }
  for (auto& p : params_) p.full.mutable_grad() = torch::Tensor();
  Stopwatch watch(times_.issue);
  CollectiveScope scope(label_);
  CollectivePadding padded(reduce_padding_ * reduce_input_.element_size());
  // Either way this rank's reduced range ends up in its own part of the input, which is scratch.
  scattered_ = scatter;
  reduce_work_ = scatter ? group_.reduce_scatter_in_place(reduce_input_, ReduceOp::Avg, /*async=*/true)
                         : group_.all_reduce(reduce_input_, ReduceOp::Avg, /*async=*/true);
}

void Unit::finish_reduce(CommGroup* replicas) {
  if (!reduce_work_) return;
  auto work = std::move(reduce_work_);
  torch::NoGradGuard no_grad;
  auto output = reduce_input_.narrow(0, group_.rank() * reduce_len_, reduce_len_);
  {
    Stopwatch watch(times_.reduce_wait);
    work->wait();
    output = output.contiguous();
    if (replicas != nullptr && replicas->size() > 1) {
      CollectiveScope scope(label_);
      replicas->all_reduce(output, ReduceOp::Avg);
    }
  }
  Stopwatch watch(times_.copies);
  // The masters' gradients are in the masters' dtype, beside them (in host memory when offloaded).
  output = output.to(shard_.device(), shard_.scalar_type());
  // After a reduce-scatter only this rank's range is kept: a gradient that took a view of the
  // reduction buffer would keep the whole buffer alive until the optimizer step.
  const bool takes_view = std::any_of(params_.begin(), params_.end(), [](const UnitParam& p) {
    return p.trainable && !p.local.grad().defined();
  });
  if (scattered_ && takes_view && output.storage().is_alias_of(reduce_input_.storage())) output = output.clone();
  for (auto& p : params_) {
    if (!p.trainable) continue;
    auto piece = output.narrow(0, p.reduce_offset, p.local.numel()).view(p.local.sizes());
    auto& grad = p.local.mutable_grad();
    if (grad.defined())
      grad.add_(piece);
    else
      grad = piece;
  }
  reduce_input_ = torch::Tensor();
}

void Unit::refresh_whole() {
  const auto whole = finish_gather();
  if (in_place_) return;  // the gather wrote the parameters' own buffer
  torch::NoGradGuard no_grad;
  Stopwatch watch(times_.copies);
  for (auto& p : params_) p.full.detach().view({-1}).copy_(whole.narrow(0, p.flat_offset, p.numel));
}

}  // namespace shardkit::shard
