// Process running, temp folders and metrics.jsonl reading for the tests.
#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace shardkit::test {
namespace fs = std::filesystem;

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

ProcessResult run_command(const std::string& command) {
  ProcessResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

ProcessResult run_program(const std::string& program, const std::vector<std::string>& args) {
  std::string command = shell_quote(std::string(SHARDKIT_BIN_DIR) + "/" + program);
  for (const auto& a : args) command += " " + shell_quote(a);
  return run_command(command);
}

TempDir::TempDir(const std::string& tag) {
  std::random_device rd;
  const auto base = fs::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto candidate = base / (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (fs::create_directory(candidate)) {
      path_ = candidate.string();
      return;
    }
  }
  throw std::runtime_error("cannot create a temp folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!std::getenv("SHARDKIT_KEEP_TEST_DIRS")) fs::remove_all(path_, ec);
}

double MetricsLine::number(const std::string& field) const {
  auto it = raw.find(field);
  if (it == raw.end()) throw std::runtime_error("metrics line has no field " + field);
  return std::stod(it->second);
}

std::vector<MetricsLine> read_metrics(const std::string& output_dir) {
  std::vector<MetricsLine> lines;
  std::ifstream in(output_dir + "/metrics.jsonl");
  std::string text;
  while (std::getline(in, text)) {
    MetricsLine line;
    // Flat object of numbers: {"k":v,"k2":v2}
    std::size_t pos = 1;
    while (pos < text.size()) {
      const auto q1 = text.find('"', pos);
      if (q1 == std::string::npos) break;
      const auto q2 = text.find('"', q1 + 1);
      const auto colon = text.find(':', q2);
      auto end = text.find_first_of(",}", colon);
      line.raw[text.substr(q1 + 1, q2 - q1 - 1)] = text.substr(colon + 1, end - colon - 1);
      pos = end + 1;
    }
    line.step = std::stoll(line.raw.at("step"));
    lines.push_back(line);
  }
  return lines;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace shardkit::test
