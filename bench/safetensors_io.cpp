// safetensors save/load throughput of shardkit's writer and reader on a ~1 GB state dict.
//
// save = safetensors::write_file of ref_of views (which includes its fsync and rename);
// load = File::open + to_tensor of every tensor (owned copies);
// open = File::open + get() of every tensor (views into the mapping: the lazy analogue of
// Python's default mmap-backed load_file, which touches no tensor byte either).
// --save_only=true measures the saves alone (bench/checkpoint/run_save_speed_benchmark.sh).
// Prints one JSON line per operation with the seconds of every repetition:
//   {"program":"shardkit","op":"save","bytes":N,"seconds":[...]}
#include <torch/torch.h>

#include <shardkit/safetensors.hpp>
#include <shardkit/safetensors_torch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace st = shardkit::safetensors;
using Clock = std::chrono::steady_clock;

/// The benchmark's state dict: `count` float32 tensors of `numel` elements, plus a few odd
/// shapes and dtypes (bf16, f16, i64, i8, bool, a scalar, an empty tensor).
std::vector<std::pair<std::string, torch::Tensor>> make_state(std::int64_t count, std::int64_t numel) {
  torch::manual_seed(0);
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (std::int64_t i = 0; i < count; ++i)
    state.emplace_back("layers." + std::to_string(i) + ".weight", torch::randn({numel / 1024, 1024}));
  state.emplace_back("odd.bf16", torch::randn({3, 1000, 77}).to(torch::kBFloat16));
  state.emplace_back("odd.f16", torch::randn({513, 257}).to(torch::kFloat16));
  state.emplace_back("odd.i64", torch::arange(12345, torch::kLong));
  state.emplace_back("odd.i8", torch::randint(-128, 127, {4099}, torch::kInt8));
  state.emplace_back("odd.bool", torch::randint(0, 2, {1001}).to(torch::kBool));
  state.emplace_back("odd.scalar_f64", torch::tensor(3.25, torch::kDouble));
  state.emplace_back("odd.empty", torch::zeros({0, 5}));
  return state;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string json_line(const std::string& op, std::uintmax_t bytes, const std::vector<double>& secs) {
  std::ostringstream out;
  out << "{\"program\":\"shardkit\",\"op\":\"" << op << "\",\"bytes\":" << bytes << ",\"seconds\":[";
  for (std::size_t i = 0; i < secs.size(); ++i) out << (i ? "," : "") << secs[i];
  out << "]}";
  return out.str();
}

int run(int argc, char** argv) {
  std::string path = "bench.safetensors", out_path;
  std::int64_t reps = 3, count = 64, numel = 4 * 1024 * 1024;
  bool save_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const auto key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "--file") path = value;
    else if (key == "--reps") reps = std::stoll(value);
    else if (key == "--num_tensors") count = std::stoll(value);
    else if (key == "--numel") numel = std::stoll(value);
    else if (key == "--out") out_path = value;
    else if (key == "--save_only") save_only = value.empty() || value == "true" || value == "1";
    else throw std::invalid_argument("unknown flag '" + arg +
                                     "' (known: --file --reps --num_tensors --numel --out --save_only)");
  }
  if (numel % 1024 != 0) throw std::invalid_argument("--numel must be a multiple of 1024");

  const auto state = make_state(count, numel);
  std::vector<st::TensorRef> refs;
  for (const auto& [name, tensor] : state) refs.push_back(st::ref_of(name, tensor));

  std::vector<double> save_s, load_s, open_s;
  for (std::int64_t r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    st::write_file(path, refs);
    save_s.push_back(seconds_since(start));
  }
  const auto bytes = std::filesystem::file_size(path);

  std::ofstream out;
  if (!out_path.empty()) {
    out.open(out_path, std::ios::app);
    if (!out) throw std::runtime_error("cannot append to --out=" + out_path);
  }
  const auto print = [&](const std::string& line) {
    std::cout << line << std::endl;
    if (out.is_open()) out << line << '\n';
  };
  if (save_only) {
    print(json_line("save", bytes, save_s));
    return 0;
  }

  std::int64_t checked = 0;
  for (std::int64_t r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    std::map<std::string, torch::Tensor> loaded;
    {
      const auto file = st::File::open(path);
      for (const auto& name : file.names()) loaded.emplace(name, st::to_tensor(file.get(name)));
    }
    load_s.push_back(seconds_since(start));
    checked = static_cast<std::int64_t>(loaded.size());
  }
  for (std::int64_t r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    const auto file = st::File::open(path);
    std::size_t seen = 0;
    for (const auto& name : file.names()) seen += file.get(name).nbytes;
    open_s.push_back(seconds_since(start));
    if (seen == 0) throw std::runtime_error(path + " holds no tensor bytes");
  }
  if (checked != static_cast<std::int64_t>(state.size()))
    throw std::runtime_error("loaded " + std::to_string(checked) + " tensors, expected " +
                             std::to_string(state.size()));

  for (const auto& line : {json_line("save", bytes, save_s), json_line("load", bytes, load_s),
                          json_line("open", bytes, open_s)})
    print(line);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_safetensors_io: " << e.what() << std::endl;
    return 2;
  }
}
