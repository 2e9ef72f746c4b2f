// DCP checkpoint I/O throughput of shardkit's save_folder / FolderReader, the peer of torch_dcp_bench.py.
//
// The state is NUM_TENSORS float32 tensors "model.layers.<i>.weight" of [rows, 1024], SIZE_MB
// in all, whose values follow a formula (see expected()) that torch_dcp_bench.py computes the
// same way, so either program can check a folder the other wrote. Modes:
//
//   dcp_bench save-load --dir=D   save R times (each into a fresh folder; the last is kept as
//                                 D/ckpt), then load D/ckpt R times into preallocated tensors,
//                                 then the page-cache floors: the folder's files read with
//                                 read() through a 1 MiB buffer (what `cat` does), and pread
//                                 into one buffer as large as the files
//   dcp_bench save-rank --dir=D   one rank of a multi-process save (started by shardkit-run,
//                                 Gloo): each rank holds its dim-0 slice of every tensor; the
//                                 last save is kept as D/ckpt
//   dcp_bench load --dir=D --op=NAME   load folder D (saved by any number of ranks, by either
//                                 program) whole into one process R times
//
// Every load is checked element for element against the formula; a mismatch exits 1. Prints
// one JSON line per operation (median of the reps is taken by the driver):
//   {"program":"shardkit","op":"save","bytes":N,"file_bytes":F,"ranks":1,"seconds":[...]}
#include <fcntl.h>
#include <unistd.h>

#include <torch/torch.h>

#include <shardkit/comm.hpp>
#include <shardkit/dcp/folder.hpp>
#include <shardkit/loader.hpp>
#include <shardkit/logging.hpp>
#include <shardkit/runtime.hpp>
#include <shardkit/sharded_state.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace dcp = shardkit::dcp;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kCols = 1024;

struct Args {
  std::string mode, dir, op, out;
  std::int64_t reps = 3, num_tensors = 8, size_mb = 256;
  double timeout_s = 300;

  std::int64_t rows() const { return size_mb * 1024 * 1024 / 4 / kCols / num_tensors; }
  std::int64_t bytes() const { return rows() * kCols * 4 * num_tensors; }
};

Args parse(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: dcp_bench save-load|save-rank|load --dir=DIR [--reps=R] [--num_tensors=N] "
      "[--size_mb=M] [--op=NAME] [--out=FILE] [--timeout=S]";
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const auto key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (arg.rfind("--", 0) != 0 && args.mode.empty()) args.mode = arg;
    else if (key == "--dir") args.dir = value;
    else if (key == "--op") args.op = value;
    else if (key == "--out") args.out = value;
    else if (key == "--reps") args.reps = std::stoll(value);
    else if (key == "--num_tensors") args.num_tensors = std::stoll(value);
    else if (key == "--size_mb") args.size_mb = std::stoll(value);
    else if (key == "--timeout") args.timeout_s = std::stod(value);
    else throw std::invalid_argument("unknown argument '" + arg + "'\n" + kUsage);
  }
  if (args.mode.empty() || args.dir.empty()) throw std::invalid_argument(kUsage);
  if (args.reps < 1 || args.num_tensors < 1 || args.rows() < 2 || args.rows() % 2 != 0 ||
      args.size_mb * 256 % args.num_tensors != 0)
    throw std::invalid_argument("--size_mb=" + std::to_string(args.size_mb) + " and --num_tensors=" +
                                std::to_string(args.num_tensors) +
                                " must give every tensor an even number of 1024-float rows");
  return args;
}

std::string key_of(std::int64_t i) { return "model.layers." + std::to_string(i) + ".weight"; }

/// Tensor i: element k is (k mod 1000003) / 4 + i, exact in float32 (torch_dcp_bench.py's
/// expected() is the same), so a swapped, shifted or stale tensor never compares equal.
torch::Tensor expected(const Args& args, std::int64_t i) {
  return torch::arange(args.rows() * kCols, torch::kLong)
      .remainder(1000003)
      .to(torch::kFloat)
      .mul_(0.25)
      .add_(static_cast<double>(i))
      .reshape({args.rows(), kCols});
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uintmax_t folder_bytes(const std::string& dir) {
  std::uintmax_t total = 0;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.is_regular_file()) total += f.file_size();
  return total;
}

void emit(const Args& args, const std::string& op, int ranks, const std::string& dir,
          const std::vector<double>& secs) {
  std::ostringstream line;
  line << "{\"program\":\"shardkit\",\"op\":\"" << op << "\",\"bytes\":" << args.bytes()
       << ",\"file_bytes\":" << folder_bytes(dir) << ",\"ranks\":" << ranks
       << ",\"num_tensors\":" << args.num_tensors << ",\"seconds\":[";
  for (std::size_t i = 0; i < secs.size(); ++i) line << (i ? "," : "") << secs[i];
  line << "]}";
  std::cout << line.str() << std::endl;
  if (!args.out.empty()) {
    std::ofstream out(args.out, std::ios::app);
    if (!(out << line.str() << '\n')) throw std::runtime_error("cannot append to --out=" + args.out);
  }
}

/// The fresh folder of repetition `rep` under `dir`; the previous one is removed first (not
/// timed), so every save writes new files, as a training run's checkpoints do.
std::string fresh_folder(const std::string& dir, std::int64_t rep) {
  const auto path = (fs::path(dir) / ("save." + std::to_string(rep))).string();
  fs::remove_all(path);
  if (rep > 0) fs::remove_all((fs::path(dir) / ("save." + std::to_string(rep - 1))).string());
  return path;
}

/// Makes the last repetition's folder D/ckpt (replacing an older one).
void keep_as_ckpt(const std::string& dir, const std::string& folder) {
  const auto ckpt = (fs::path(dir) / "ckpt").string();
  fs::remove_all(ckpt);
  fs::rename(folder, ckpt);
}

/// Loads folder `dir` whole into preallocated tensors `reps` times, checking every load.
std::vector<double> timed_loads(const Args& args, const std::string& dir) {
  std::vector<torch::Tensor> wanted_data, reference;
  shardkit::ShardedState wanted;
  for (std::int64_t i = 0; i < args.num_tensors; ++i) {
    reference.push_back(expected(args, i));
    wanted_data.push_back(torch::empty({args.rows(), kCols}));
    wanted.add(key_of(i), wanted_data.back(), shardkit::ShardLayout::whole({args.rows(), kCols}),
               shardkit::Replicas::none());
  }
  std::vector<double> secs;
  for (std::int64_t r = 0; r < args.reps; ++r) {
    for (auto& t : wanted_data) t.fill_(-1);  // touched and stale: a skipped copy shows
    const auto start = Clock::now();
    dcp::FolderReader(dir).load(wanted, "model.");
    secs.push_back(seconds_since(start));
    for (std::int64_t i = 0; i < args.num_tensors; ++i)
      if (!torch::equal(wanted_data[i], reference[i]))
        throw std::runtime_error("load of " + dir + ": " + key_of(i) + " differs from what was saved");
  }
  return secs;
}

/// The page-cache floors on the files of `dir`: read() through a 1 MiB buffer (cat), and
/// pread of each file into one preallocated buffer of the folder's size.
void read_floors(const Args& args, const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.is_regular_file()) files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  std::vector<char> small(1 << 20), big(folder_bytes(dir));
  std::fill(big.begin(), big.end(), 1);
  auto open_or_throw = [](const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    return fd;
  };
  std::vector<double> cat_s, into_s;
  for (std::int64_t r = 0; r < args.reps; ++r) {
    auto start = Clock::now();
    for (const auto& path : files) {
      const int fd = open_or_throw(path);
      while (true) {
        const auto n = ::read(fd, small.data(), small.size());
        if (n == 0) break;
        if (n < 0 && errno != EINTR) throw std::runtime_error("cannot read " + path);
      }
      ::close(fd);
    }
    cat_s.push_back(seconds_since(start));
    start = Clock::now();
    std::size_t at = 0;
    for (const auto& path : files) {
      const int fd = open_or_throw(path);
      const auto size = static_cast<std::size_t>(fs::file_size(path));
      for (std::size_t done = 0; done < size;) {
        const auto n = ::pread(fd, big.data() + at + done, size - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("cannot read " + path + " (or it shrank while being read)");
        done += static_cast<std::size_t>(n);
      }
      at += size;
      ::close(fd);
    }
    into_s.push_back(seconds_since(start));
  }
  emit(args, "read_cat", 1, dir, cat_s);
  emit(args, "read_into", 1, dir, into_s);
}

void save_load(const Args& args) {
  shardkit::ShardedState state;
  for (std::int64_t i = 0; i < args.num_tensors; ++i)
    state.add(key_of(i), expected(args, i), shardkit::ShardLayout::whole({args.rows(), kCols}),
              shardkit::Replicas::none());
  fs::create_directories(args.dir);
  std::vector<double> save_s;
  std::string folder;
  for (std::int64_t r = 0; r < args.reps; ++r) {
    folder = fresh_folder(args.dir, r);
    const auto start = Clock::now();
    dcp::save_folder(state, "model.", folder, nullptr);
    save_s.push_back(seconds_since(start));
  }
  keep_as_ckpt(args.dir, folder);
  const auto ckpt = (fs::path(args.dir) / "ckpt").string();
  emit(args, "save", 1, ckpt, save_s);
  emit(args, "load", 1, ckpt, timed_loads(args, ckpt));
  read_floors(args, ckpt);
}

/// One rank of a multi-process save: this rank's dim-0 slice of every tensor, saved
/// collectively; a save is timed from a barrier to a barrier after it (the slowest rank).
void save_rank(const Args& args) {
  const auto runtime = shardkit::Runtime::from_environment();
  shardkit::set_log_rank(runtime.rank, runtime.world_size);
  if (args.rows() % runtime.world_size != 0)
    throw std::invalid_argument("rows per tensor (" + std::to_string(args.rows()) +
                                ") do not split evenly over " + std::to_string(runtime.world_size) + " ranks");
  shardkit::Registry registry;
  registry.discover(shardkit::PluginSearch{});
  shardkit::PluginContext context;
  context.logger = shardkit::logger();
  context.runtime = &runtime;
  auto comm = registry.create_as<shardkit::Comm>("comm", "gloo", context);
  comm->init(shardkit::CommInit::from_runtime(runtime, args.timeout_s));
  auto world = comm->world();

  const auto rows = args.rows() / world->size(), first = rows * world->rank();
  shardkit::ShardedState state;
  for (std::int64_t i = 0; i < args.num_tensors; ++i) {
    shardkit::ShardLayout layout;
    layout.global_shape = {args.rows(), kCols};
    layout.chunks = {{{{first, 0}, {rows, kCols}}, 0}};
    state.add(key_of(i), expected(args, i).narrow(0, first, rows).clone(), layout, shardkit::Replicas::none());
  }
  if (world->rank() == 0) fs::create_directories(args.dir);
  std::vector<double> save_s;
  std::string folder;
  for (std::int64_t r = 0; r < args.reps; ++r) {
    if (world->rank() == 0) folder = fresh_folder(args.dir, r);
    else folder = (fs::path(args.dir) / ("save." + std::to_string(r))).string();
    world->barrier();
    const auto start = Clock::now();
    dcp::save_folder(state, "model.", folder, world.get());
    world->barrier();
    save_s.push_back(seconds_since(start));
  }
  if (world->rank() == 0) {
    keep_as_ckpt(args.dir, folder);
    emit(args, args.op.empty() ? "save" : args.op, world->size(), (fs::path(args.dir) / "ckpt").string(), save_s);
  }
  world->barrier();
}

int run(int argc, char** argv) {
  const auto args = parse(argc, argv);
  torch::set_num_threads(1);
  if (args.mode == "save-load") save_load(args);
  else if (args.mode == "save-rank") save_rank(args);
  else if (args.mode == "load") emit(args, args.op.empty() ? "load" : args.op, 1, args.dir, timed_loads(args, args.dir));
  else throw std::invalid_argument("unknown mode '" + args.mode + "' (save-load, save-rank, load)");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "dcp_bench: " << e.what() << std::endl;
    return 1;
  }
}
