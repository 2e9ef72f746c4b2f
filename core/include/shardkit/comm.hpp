// The transport interface backends talk through: process groups, collectives, the rendezvous store.
//
// A comm plugin (kind "comm", e.g. `gloo`) implements it on top of PyTorch's c10d; only
// comm plugins include c10d headers. Everything here takes and returns LibTorch tensors
// and std types. Every blocking call honours the timeout given at init() and turns a
// lost peer or a timeout into shardkit::RuntimeError naming the operation and group,
// never a hang.
//
//   auto comm = registry.create_as<shardkit::Comm>("comm", "gloo", ctx);
//   comm->init(shardkit::CommInit::from_runtime(runtime, 600));
//   auto world = comm->world();
//   world->all_reduce(grad, shardkit::ReduceOp::Avg)->wait();
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "shardkit/plugin.hpp"

namespace shardkit {

struct Runtime;

/// Reductions a collective may apply.
enum class ReduceOp { Sum, Avg, Max };

/// Collective operations, for supports().
enum class CommOp { AllReduce, Broadcast, AllGather, ReduceScatter, Barrier };

/// How a transport provides an operation on a dtype.
enum class Support {
  Native,       ///< the transport does it directly
  Emulated,     ///< done through other operations, with extra traffic or copies
  Unsupported,  ///< refused: calling it throws "<transport> does not support <operation>"
};

const char* to_string(ReduceOp op);
const char* to_string(CommOp op);
const char* to_string(Support support);

/// A pending collective. wait() returns when the result is in place, and throws
/// shardkit::RuntimeError on a timeout or a lost peer. Waiting twice is harmless.
class Work {
 public:
  virtual ~Work();
  virtual void wait() = 0;
};
using WorkHandle = std::shared_ptr<Work>;

/// A Work that is already complete (synchronous calls and single-member groups).
WorkHandle completed_work();

/// One process group: a fixed set of ranks that run collectives together. All members
/// must issue the same collectives in the same order. `async=false` waits before
/// returning (the handle is then already complete).
class CommGroup {
 public:
  virtual ~CommGroup();
  /// This process's rank inside the group.
  virtual int rank() const = 0;
  /// Number of members.
  virtual int size() const = 0;
  /// Name for messages, e.g. "world" or "dp_shard[1]".
  virtual const std::string& name() const = 0;

  /// In place on `tensor` (contiguous). Avg divides the sum by size().
  virtual WorkHandle all_reduce(torch::Tensor& tensor, ReduceOp op, bool async = false) = 0;
  /// In place on `tensor` (contiguous), from group rank `root`.
  virtual WorkHandle broadcast(torch::Tensor& tensor, int root, bool async = false) = 0;
  /// `output` (contiguous, size() x input.numel() elements of input's dtype) receives
  /// every member's `input`, in rank order.
  virtual WorkHandle all_gather(torch::Tensor& output, const torch::Tensor& input,
                                bool async = false) = 0;
  /// `input` (contiguous, size() x output.numel() elements) is reduced across members
  /// and member r receives chunk r in `output`.
  virtual WorkHandle reduce_scatter(torch::Tensor& output, const torch::Tensor& input,
                                    ReduceOp op, bool async = false) = 0;
  /// Returns when every member reached it.
  virtual void barrier() = 0;
  /// Every member's `mine`, in rank order (plans, config hashes).
  virtual std::vector<std::string> all_gather_bytes(const std::string& mine) = 0;
  /// How this group's transport provides `op` on `dtype`.
  virtual Support supports(CommOp op, torch::ScalarType dtype) const = 0;
  // Added in comm kind ABI 2, last so that the slots before it keep their places.
  /// Reduce-scatter within one buffer the caller gives up: `buffer` (contiguous, size() x n
  /// elements) is reduced across members; after wait(), chunk rank() of it (elements
  /// rank() x n .. + n) holds this member's reduced chunk and the other chunks are unspecified.
  /// Neither may be touched before wait(). It saves the copy a transport would make of a
  /// reduce-scatter's input: Gloo's reduce-scatter is an all-reduce of a whole copy, which this
  /// runs in `buffer` itself. The default is reduce_scatter() into a new chunk, copied back.
  virtual WorkHandle reduce_scatter_in_place(torch::Tensor& buffer, ReduceOp op, bool async = false);
};

/// A group of one process: every collective is the identity and completes at once.
std::shared_ptr<CommGroup> make_local_group(const std::string& name = "local");
/// A group that only has a shape, for planning (--dry_run): rank 0 of `size` members; every
/// collective completes at once and moves no data.
std::shared_ptr<CommGroup> make_planning_group(const std::string& name, int size);

/// The rendezvous key-value store (c10d's TCPStore behind the plugin).
class Store {
 public:
  virtual ~Store();
  virtual void set(const std::string& key, const std::string& value) = 0;
  /// Blocks until `key` exists or the store's timeout passes (then RuntimeError).
  virtual std::string get(const std::string& key) = 0;
  /// Atomically adds `delta` to the integer at `key` (0 when absent); returns the sum.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  /// True when every key exists (does not block).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  /// Blocks until every key exists; throws RuntimeError after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  /// The same store with every key prefixed by `prefix` + "/".
  virtual std::shared_ptr<Store> with_prefix(const std::string& prefix) = 0;
};

/// How a worker joins the run: read from the environment by from_runtime().
struct CommInit {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";  ///< MASTER_ADDR
  int master_port = 29500;                ///< MASTER_PORT
  /// TORCHELASTIC_USE_AGENT_STORE: the launcher hosts the store; every worker joins it
  /// as a client under the prefix "/worker/attempt_<restart_count>". Otherwise rank 0
  /// hosts the store at master_addr:master_port.
  bool use_agent_store = false;
  int restart_count = 0;  ///< TORCHELASTIC_RESTART_COUNT
  std::chrono::milliseconds timeout{600'000};  ///< every collective and store wait
  /// Network interface Gloo binds to (GLOO_SOCKET_IFNAME); empty = resolve the host name,
  /// or loopback when master_addr is a loopback address.
  std::string socket_ifname;
  /// The torch device this rank computes on ("cpu", "cuda:1"); a CUDA transport binds its
  /// communicators to it. Default "cpu".
  std::string device = "cpu";

  /// From the runtime and the environment (MASTER_ADDR, MASTER_PORT,
  /// TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT, GLOO_SOCKET_IFNAME);
  /// `device` is the runtime's.
  static CommInit from_runtime(const Runtime& runtime, double timeout_s);
};

/// A transport. init() is collective over the whole world: it joins the store, waits for
/// every rank (naming the ranks that never arrived when the timeout passes), and builds
/// the world group. new_group() is collective over the group's members only.
class Comm : public Plugin {
 public:
  ~Comm() override;
  virtual void init(const CommInit& init) = 0;
  virtual std::shared_ptr<CommGroup> world() = 0;
  /// A group of the given world ranks (sorted, containing this rank). `tag` must be the
  /// same on every member and unique per group, e.g. "dp_shard/1".
  virtual std::shared_ptr<CommGroup> new_group(const std::vector<int>& ranks,
                                               const std::string& tag) = 0;
  /// The run's store (already under this attempt's prefix).
  virtual std::shared_ptr<Store> store() = 0;

  /// Launcher side: hosts a store server on `port` of every interface (0 = pick a free
  /// one; see bound_port()). Usable before and without init().
  virtual std::shared_ptr<Store> host_store(int port, std::chrono::milliseconds timeout) = 0;
  /// Joins the store at host:port as a client (a launcher on another node).
  virtual std::shared_ptr<Store> connect_store(const std::string& host, int port,
                                               std::chrono::milliseconds timeout) = 0;
  /// The port the last host_store() bound.
  virtual int bound_port() const = 0;
};

/// Keys every worker and the launcher agree on (under the attempt prefix).
namespace store_keys {
/// Set by each worker when it joined: "arrived/<rank>".
std::string arrived(int rank);
/// Set by a launcher when one of its workers failed: a one-line description.
inline constexpr const char* kFailure = "shardkit/failure";
}  // namespace store_keys

}  // namespace shardkit
