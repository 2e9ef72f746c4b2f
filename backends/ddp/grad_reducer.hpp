// The ddp gradient reducer: bucketed all-reduce launched from grad-accumulated hooks during backward.
//
// Per synchronised step: each trainable parameter's hook marks it ready once its gradient
// is accumulated; a bucket whose parameters are all ready is copied into its flat buffer
// and all-reduced (Sum, async) as soon as every earlier bucket was launched, so every rank
// launches buckets in the same order (Gloo pairs collectives by order). finish() launches
// what is left, waits, divides by the group size and copies the averages back into .grad().
//
// A parameter that got no gradient since the last synchronised step:
//  - find_unused=false: its bucket (and every later one) is never launched and finish()
//    throws a RuntimeError naming it, before any collective for that bucket. Peers that
//    did launch it block in that collective until this rank's process exits (the launcher
//    stops the run) and the transport reports the lost peer or its timeout.
//  - find_unused=true: it counts as zeros; one extra all-reduce of a usage map tells
//    which parameters no rank used, whose .grad() stays as it was (undefined after
//    zero_grad), as in PyTorch.
// One backward per synchronised step: a gradient that arrives after its bucket was
// launched is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <shardkit/autograd_hooks.hpp>
#include <shardkit/backend.hpp>
#include <shardkit/comm.hpp>

namespace shardkit::ddp {

/// How the reducer batches and launches its collectives.
struct ReducerOptions {
  std::int64_t bucket_cap_bytes = 25 * 1024 * 1024;  ///< default 25 MiB
  bool find_unused_parameters = false;               ///< default false
  bool overlap = true;  ///< launch from hooks during backward (default); false = after backward
};

class GradReducer {
 public:
  /// `params` are the trainable parameters in registration order; `group` must outlive
  /// the reducer. Installs one hook per parameter.
  GradReducer(std::vector<ParamShard> params, CommGroup& group, ReducerOptions options);
  ~GradReducer();
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  /// Whether the coming backward synchronises (false: gradients accumulate locally).
  void set_sync(bool enabled);
  /// After backward: completes the all-reduce (sync steps) and writes the averages into
  /// .grad(). No-op on non-sync steps.
  void finish();

  std::size_t num_buckets() const { return buckets_.size(); }
  /// Parameter indices of each bucket, in launch order.
  std::vector<std::vector<std::size_t>> bucket_indices() const;

 private:
  struct Bucket {
    std::vector<std::size_t> params;     // indices into params_, reverse registration order
    std::vector<std::int64_t> offsets;   // element offset of each in `flat`
    torch::Tensor flat;
    std::size_t pending = 0;             // parameters not ready yet in this step
    WorkHandle work;
  };

  void on_accumulated(std::size_t index);
  void on_backward_end();
  void mark_ready(std::size_t index);
  void mark_leftovers_ready();
  void launch_ready_buckets();
  void launch(Bucket& bucket);
  void write_back(Bucket& bucket, const torch::Tensor& used_counts);
  std::vector<std::string> missing_parameters() const;
  void reset_step();

  std::vector<ParamShard> params_;
  CommGroup& group_;
  ReducerOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_;  // parameter -> bucket
  std::vector<char> ready_;             // included in this step's all-reduce
  std::vector<char> used_;              // got a gradient since the last sync step
  std::size_t next_launch_ = 0;
  bool sync_ = true;
  bool end_queued_ = false;
  std::mutex mutex_;
  std::vector<GradHookHandle> hooks_;  // last: removed before the state they touch
};

}  // namespace shardkit::ddp
