// The collective ledger: recording, failure reports and the per-step comparison across ranks.
#include "ledger.hpp"

#include <cstdio>
#include <cstdlib>

#include <boost/json.hpp>

#include "ledger_reports.hpp"
#include "shardkit/comm_support.hpp"
#include "shardkit/error.hpp"
#include "shardkit/ledger.hpp"
#include "shardkit/logging.hpp"

namespace shardkit::ledger {
namespace {

constexpr std::size_t kWindowLimit = 4096;  // entries of one step kept for naming a difference

std::string window_key(std::int64_t step, int rank) {
  return "shardkit/ledger/window/" + std::to_string(step) + "/" + std::to_string(rank);
}

}  // namespace

Ledger::Ledger(std::shared_ptr<Store> store, int rank, int world_size, std::string backend, Options options)
    : store_(std::move(store)), rank_(rank), world_size_(world_size), backend_(std::move(backend)),
      options_(options) {
  if (const char* fault = std::getenv("SHARDKIT_TEST_SKIP_COLLECTIVE")) {
    int rank = -1;
    unsigned long long seq = 0;
    if (std::sscanf(fault, "%d:%llu", &rank, &seq) == 2 && rank == rank_) skip_seq_ = seq;
  }
  if (store_ && world_size_ > 1) watcher_ = std::thread([this] { watch(); });
}

bool Ledger::skip_for_test(const std::string& group) {
  if (group != "world") return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (skip_seq_ == 0 || issued_[group] + 1 != skip_seq_) return false;
  skip_seq_ = 0;  // skipped once, neither issued nor recorded: the next call takes its number
  return true;
}

Ledger::~Ledger() {
  stopping_ = true;
  watch_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

std::uint64_t Ledger::issue(const std::string& group, const char* op, const torch::Tensor* tensor, int group_size,
                            std::int64_t payload) {
  Entry e;
  e.group = group;
  e.op = op;
  if (tensor != nullptr) {
    e.shape = tensor->sizes().vec();
    e.dtype = dtype_name(tensor->scalar_type());
  }
  e.scope = current_collective_scope();
  if (e.scope.empty()) e.scope = backend_;
  e.signature = signature_of(e.op, e.group, e.shape, e.dtype, e.scope);
  e.issued_at = wall_seconds();
  const auto source = e.scope.substr(0, e.scope.find(','));
  const auto padding = current_collective_padding();
  std::lock_guard<std::mutex> lock(mutex_);
  auto& traffic = (step_ == 0 ? startup_traffic_ : traffic_)[{group_kind(group), e.op, source}];
  ++traffic.calls;
  traffic.payload_bytes += payload;
  traffic.sent_bytes += ring_bytes(e.op, payload, group_size);
  traffic.padding_bytes += padding;
  traffic.padding_sent_bytes += ring_bytes(e.op, padding, group_size);
  traffic.group_size = group_size;
  e.seq = ++issued_[group];
  e.step = step_;
  window_hash_ = mix(window_hash_, e.signature);
  ++window_count_;
  if (window_.size() < kWindowLimit) window_.push_back(e);
  const auto id = next_id_++;
  recent_.push_back({id, std::move(e)});
  if (recent_.size() > options_.capacity) recent_.pop_front();
  ++version_;
  return id;
}

Entry* Ledger::find_locked(std::uint64_t id) {
  if (recent_.empty() || id < recent_.front().id) return nullptr;
  const auto i = static_cast<std::size_t>(id - recent_.front().id);
  return i < recent_.size() ? &recent_[i].entry : nullptr;
}

void Ledger::waiting(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  waiting_id_ = id;
  waiting_since_ = wall_seconds();
  ++version_;
}

void Ledger::completed(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto* e = find_locked(id)) e->done = true;
  if (waiting_id_ == id) waiting_id_ = 0;
  ++version_;
}

void Ledger::begin_step(std::int64_t step) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
}

Snapshot Ledger::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s;
  s.rank = rank_;
  s.published_at = wall_seconds();
  s.step = step_;
  s.issued = issued_;
  if (waiting_id_ != 0 && !recent_.empty() && waiting_id_ >= recent_.front().id) {
    const auto& e = recent_[static_cast<std::size_t>(waiting_id_ - recent_.front().id)].entry;
    s.waiting_group = e.group;
    s.waiting_seq = e.seq;
    s.waiting_since = waiting_since_;
  }
  for (const auto& slot : recent_) s.entries.push_back(slot.entry);
  return s;
}

void Ledger::failed(std::uint64_t id, const std::string& message) {
  failing_ = true;
  Entry failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto* e = find_locked(id)) failed = *e;
    waiting_id_ = 0;
    ++version_;
  }
  // Let the peers publish what they issued up to now before reading their records.
  std::this_thread::sleep_for(options_.publish_interval * 2);
  const auto report = stall_report(failed, snapshot(), read_peers(std::chrono::seconds(3)), world_size_,
                                   wall_seconds());
  tell_others("rank " + std::to_string(rank_) + ": " + failed.text() + " failed");
  throw RuntimeError(message + "\n" + report);
}

void Ledger::close_update_traffic() {
  std::lock_guard<std::mutex> lock(mutex_);
  last_update_traffic_.clear();
  last_update_traffic_.swap(traffic_);
  add_traffic(total_traffic_, last_update_traffic_);
  ++updates_;
}

Traffic Ledger::last_update_traffic() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_update_traffic_;
}

std::string Ledger::traffic_summary_text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return updates_ == 0 ? std::string() : traffic_summary(total_traffic_, updates_, startup_traffic_);
}

void Ledger::end_step(std::int64_t step, CommGroup& world) {
  std::vector<Entry> window;
  std::uint64_t hash = 0, count = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    window.swap(window_);
    std::swap(hash, window_hash_);
    std::swap(count, window_count_);
  }
  if (!options_.check_steps || world.size() == 1) return close_update_traffic();
  // One small all-reduce: the maximum of each value and of its negation tell whether all agree.
  const auto lo = static_cast<std::int64_t>(hash & 0xffffffffULL), hi = static_cast<std::int64_t>(hash >> 32);
  const auto n = static_cast<std::int64_t>(count);
  auto values = torch::tensor(std::vector<std::int64_t>{lo, -lo, hi, -hi, n, -n}, torch::kInt64);
  {
    CollectiveScope scope("ledger check");
    world.all_reduce(values, ReduceOp::Max);
  }
  close_update_traffic();  // the check's own all-reduce is this update's
  const auto* v = values.data_ptr<std::int64_t>();
  if (v[0] == -v[1] && v[2] == -v[3] && v[4] == -v[5]) return;

  // The ranks differ: find the first differing pair through the store, the same on every rank.
  boost::json::object mine;
  mine["hash"] = std::to_string(hash);
  mine["entries"] = boost::json::parse(to_json(window));
  store_->set(window_key(step, rank_), boost::json::serialize(mine));
  std::vector<std::string> keys;
  for (int r = 0; r < world_size_; ++r) keys.push_back(window_key(step, r));
  store_->wait(keys, std::chrono::seconds(60));
  const auto read = [&](int r) {
    const auto o = boost::json::parse(store_->get(keys[static_cast<std::size_t>(r)])).as_object();
    return std::make_pair(std::string(o.at("hash").as_string()), entries_from_json(boost::json::serialize(o.at("entries"))));
  };
  const auto first = read(0);
  for (int r = 1; r < world_size_; ++r) {
    const auto other = read(r);
    if (other.first == first.first) continue;
    if (const auto d = first_difference_in_order(other.second, first.second))
      throw RuntimeError(divergence_report(r, d->mine, 0, d->theirs));
    throw RuntimeError("ranks diverged before the end of step " + std::to_string(step) + ": rank " +
                       std::to_string(r) + " and rank 0 issued different collectives, beyond the first " +
                       std::to_string(kWindowLimit) + " of the step that the ledger keeps");
  }
  throw RuntimeError("ranks diverged before the end of step " + std::to_string(step) +
                     ": their collective counts or hashes differ, but their records agree; "
                     "this is a bug in shardkit's collective ledger, please report it");
}

}  // namespace shardkit::ledger
