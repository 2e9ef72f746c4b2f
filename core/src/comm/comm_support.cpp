// Transport-independent comm plugin machinery: the rendezvous wait, group checks, failure messages.
#include "shardkit/comm_support.hpp"

#include <algorithm>
#include <cstdio>
#include <future>
#include <thread>

#include "shardkit/error.hpp"

namespace shardkit {
namespace {

// The launcher notices a dead worker a moment after its peers do.
constexpr std::chrono::milliseconds kReportWindow{3000};

}  // namespace

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::string seconds_text(std::chrono::milliseconds timeout) {
  const auto ms = timeout.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g s", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string dtype_name(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kFloat: return "float32";
    case torch::kDouble: return "float64";
    case torch::kHalf: return "float16";
    case torch::kBFloat16: return "bfloat16";
    case torch::kInt: return "int32";
    case torch::kLong: return "int64";
    case torch::kShort: return "int16";
    case torch::kChar: return "int8";
    case torch::kByte: return "uint8";
    case torch::kBool: return "bool";
    case torch::kComplexHalf: return "complex32";
    case torch::kComplexFloat: return "complex64";
    case torch::kComplexDouble: return "complex128";
    default: return c10::toString(dtype);
  }
}

void check_comm_init(const std::string& transport, const CommInit& init) {
  if (init.world_size < 1 || init.rank < 0 || init.rank >= init.world_size)
    throw ConfigError("comm '" + transport + "': rank " + std::to_string(init.rank) +
                      " of world size " + std::to_string(init.world_size) +
                      " is not a valid place in the run");
  if (init.timeout.count() <= 0)
    throw ConfigError("comm '" + transport + "': the timeout must be positive, got " +
                      std::to_string(init.timeout.count()) + " ms");
}

void wait_for_all_ranks(Store& store, const CommInit& init) {
  store.set(store_keys::arrived(init.rank), "1");
  std::vector<std::string> keys;
  for (int r = 0; r < init.world_size; ++r) keys.push_back(store_keys::arrived(r));
  const auto deadline = std::chrono::steady_clock::now() + init.timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!store.check(keys)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      std::vector<int> absent;
      for (int r = 0; r < init.world_size; ++r)
        if (!store.check({keys[r]})) absent.push_back(r);
      if (absent.empty()) return;  // the last one arrived just now
      const auto where = init.master_addr + ":" + std::to_string(init.master_port);
      throw RuntimeError("rendezvous at " + where + " timed out after " +
                         seconds_text(init.timeout) + ": " + rank_list(absent) +
                         " never arrived (" +
                         std::to_string(init.world_size - static_cast<int>(absent.size())) +
                         " of " + std::to_string(init.world_size) +
                         " joined); check that every node was started and can reach " + where);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

int group_position(const std::string& transport, const std::vector<int>& ranks,
                   const std::string& tag, const CommInit& init) {
  std::string listed;
  for (const int r : ranks) listed += (listed.empty() ? "" : ", ") + std::to_string(r);
  const auto describe =
      "comm '" + transport + "': new_group('" + tag + "', ranks [" + listed + "])";
  if (tag.empty()) throw ConfigError(describe + ": the tag is empty; give each group a unique tag");
  int position = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= init.world_size)
      throw ConfigError(describe + ": rank " + std::to_string(ranks[i]) +
                        " is outside the world of " + std::to_string(init.world_size));
    if (i > 0 && ranks[i] <= ranks[i - 1])
      throw ConfigError(describe + ": ranks must be sorted and distinct");
    if (ranks[i] == init.rank) position = static_cast<int>(i);
  }
  if (position < 0)
    throw ConfigError(describe + ": this process (rank " + std::to_string(init.rank) +
                      ") is not a member; only the members call new_group");
  return position;
}

std::string launcher_report(const std::shared_ptr<Store>& store) {
  if (!store) return "";
  auto promise = std::make_shared<std::promise<std::string>>();
  auto future = promise->get_future();
  // A detached thread: a store on an unreachable host could block a read for its whole
  // socket timeout, and the caller must not wait for that.
  std::thread([store, promise] {
    std::string report;
    try {
      const auto deadline = std::chrono::steady_clock::now() + kReportWindow;
      while (true) {
        if (store->check({store_keys::kFailure})) {
          report = store->get(store_keys::kFailure);
          break;
        }
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    } catch (...) {
      // The store went away with its host: nothing to report.
    }
    promise->set_value(report);
  }).detach();
  if (future.wait_for(kReportWindow + std::chrono::milliseconds(500)) != std::future_status::ready)
    return "";
  return future.get();
}

void throw_collective_failure(const GroupInfo& group, const std::string& op,
                              const std::string& message) {
  const auto report = launcher_report(group.store);
  throw RuntimeError(group.transport + " " + op + " on group '" + group.name + "' (rank " +
                     std::to_string(group.rank) + " of " + std::to_string(group.size) +
                     ") failed: " + message +
                     (report.empty() ? "; a peer rank probably exited or timed out"
                                     : "; the launcher reports: " + report));
}

}  // namespace shardkit
