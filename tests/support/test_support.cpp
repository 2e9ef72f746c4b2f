// Process running, temp folders and metrics.jsonl reading for the tests.
#include "test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
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

std::string python() { return shell_quote(SHARDKIT_PYTHON); }

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



int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot find a free port");
  ::close(fd);
  return ntohs(addr.sin_port);
}

BackgroundProcess::BackgroundProcess(const std::string& command) {
  static int counter = 0;
  log_ = (fs::temp_directory_path() / ("shardkit-bg-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(counter++) + ".log")).string();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    // A suite started as a shell's background job inherits SIGINT ignored, which would
    // stay ignored across exec: the command gets the default, as from a terminal.
    ::signal(SIGINT, SIG_DFL);
    // exec: the pid is the command's own, so signal() reaches it and not a shell.
    const std::string full = "exec " + command + " >" + shell_quote(log_) + " 2>&1";
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !done_) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  fs::remove(log_, ec);
}

void BackgroundProcess::signal(int sig) const {
  if (pid_ > 0 && !done_) ::kill(pid_, sig);
}

bool BackgroundProcess::wait(double timeout_s) {
  if (done_) return true;
  return wait_until(
      [this] {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
        done_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
      },
      timeout_s);
}

bool BackgroundProcess::wait_for(const std::function<bool()>& condition, double timeout_s) {
  return wait_until([&] { return condition() || wait(0); }, timeout_s) && condition();
}

std::string BackgroundProcess::output() const { return slurp(log_); }

bool wait_until(const std::function<bool()>& condition, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<int> processes_with(const std::string& needle) {
  std::vector<int> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto cmdline = slurp((entry.path() / "cmdline").string());
    for (auto& c : cmdline) if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos && std::stoi(name) != ::getpid())
      pids.push_back(std::stoi(name));
  }
  return pids;
}

std::string environment_of(int pid, const std::string& name) {
  const auto env = slurp("/proc/" + std::to_string(pid) + "/environ");
  const auto key = name + "=";
  std::size_t pos = 0;
  while (pos < env.size()) {
    auto end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, key.size(), key) == 0) return env.substr(pos + key.size(), end - pos - key.size());
    pos = end + 1;
  }
  return "";
}

}  // namespace shardkit::test
