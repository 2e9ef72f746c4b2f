// Other ways to start a run: PyTorch's torchrun and accelerate launch (the venv's), and two "nodes" in network namespaces.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>

#include "launch.hpp"
#include "skip.hpp"

using namespace shardkit::test;

namespace {
/// Two network namespaces joined by a veth pair; removed on destruction.
class TwoNamespaces {
 public:
  TwoNamespaces() {
    const auto id = std::to_string(::getpid() % 100000);
    a_ = "ska" + id;
    b_ = "skb" + id;
    const auto r = run_command("ip netns add " + a_);
    if (r.exit_code != 0) {
      reason_ = "`ip netns add` was refused (needs iproute2 and CAP_NET_ADMIN): " + r.output;
      return;
    }
    created_ = true;
    const std::string veth_a = "vska" + id, veth_b = "vskb" + id;
    const auto setup = run_command(
        "set -e; ip netns add " + b_ + "; ip link add " + veth_a + " type veth peer name " + veth_b +
        "; ip link set " + veth_a + " netns " + a_ + "; ip link set " + veth_b + " netns " + b_ +
        "; ip -n " + a_ + " addr add 10.231.7.1/24 dev " + veth_a + "; ip -n " + b_ +
        " addr add 10.231.7.2/24 dev " + veth_b + "; ip -n " + a_ + " link set " + veth_a + " up; ip -n " +
        b_ + " link set " + veth_b + " up; ip -n " + a_ + " link set lo up; ip -n " + b_ + " link set lo up");
    if (setup.exit_code != 0) reason_ = "setting up the veth pair failed: " + setup.output;
  }
  ~TwoNamespaces() {
    if (created_) run_command("ip netns del " + a_ + "; ip netns del " + b_);
  }
  bool ok() const { return created_ && reason_.empty(); }
  const std::string& reason() const { return reason_; }
  std::string exec(int node) const { return "ip netns exec " + (node == 0 ? a_ : b_) + " "; }

 private:
  std::string a_, b_, reason_;
  bool created_ = false;
};

std::string train_command(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(bin("shardkit-train"));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return cmd;
}
}  // namespace

// Tagged [netns]: CTest runs it as a test of its own, so that its skip on a machine that cannot
// make namespaces does not turn the rest of this executable's passes into a skip.
TEST_CASE("two nodes in two network namespaces train together", "[netns]") {
  TwoNamespaces net;
  if (!net.ok()) SHARDKIT_SKIP("two-node test: " << net.reason());
  TempDir dir("sk-2node");
  const auto args = tiny_run(dir / "run", {"--steps=20", "--batch_size=4"});
  const auto port = std::to_string(free_port());
  auto node = [&](int k) {
    return net.exec(k) + shell_quote(bin("shardkit-run")) + " --nnodes=2 --node-rank=" + std::to_string(k) +
           " --nproc-per-node=1 --rdzv-endpoint=10.231.7.1:" + port + " --grace-period-s=5 " + train_command(args);
  };
  BackgroundProcess node0(node(0));
  BackgroundProcess node1(node(1));
  const bool done0 = node0.wait(180), done1 = node1.wait(180);
  INFO("node 0:\n" << node0.output() << "\nnode 1:\n" << node1.output());
  REQUIRE(done0);
  REQUIRE(done1);
  CHECK(node0.exit_code() == 0);
  CHECK(node1.exit_code() == 0);
  // The same curve as two processes on one node (a sum of two terms is exact either way).
  const auto local = launch(2, tiny_run(dir / "local", {"--steps=20", "--batch_size=4"}));
  REQUIRE(local.exit_code == 0);
  const auto a = read_metrics(dir / "run"), b = read_metrics(dir / "local");
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].raw.at("loss") == b[i].raw.at("loss"));
}

TEST_CASE("PyTorch 2.15's torchrun and accelerate launch start shardkit-train, matching shardkit-run") {
  TempDir dir("sk-torchrun");
  const auto ours = launch(2, tiny_run(dir / "ours", {"--steps=20", "--batch_size=4"}));
  REQUIRE(ours.exit_code == 0);
  const auto b = read_metrics(dir / "ours");
  REQUIRE(b.size() == 20);
  const auto port = [] { return std::to_string(free_port()); };
  // torchrun accepts both spellings of its flags; shardkit-train must run under either. Without
  // a GPU, accelerate starts several processes (through torchrun) only with --multi_gpu; else it
  // runs one process without RANK or WORLD_SIZE.
  const std::map<std::string, std::string> launchers = {
      {"torchrun-dash", python() + " -m torch.distributed.run --nproc-per-node=2 --master-port=" + port() + " --no-python "},
      {"torchrun-underscore", python() + " -m torch.distributed.run --nproc_per_node=2 --master_port=" + port() + " --no_python "},
      {"accelerate", python() + " -m accelerate.commands.launch --multi_gpu --num_processes=2 --main_process_port=" +
                         port() + " --no_python "}};
  for (const auto& [name, launcher] : launchers) {
    const auto out = dir / name;
    const auto run = run_command(launcher + train_command(tiny_run(out, {"--steps=20", "--batch_size=4"})));
    INFO(name << ":\n" << run.output);
    REQUIRE(run.exit_code == 0);
    CHECK(contains(run.output, "x 2 dp workers"));
    const auto a = read_metrics(out);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].raw.at("loss") == b[i].raw.at("loss"));
  }
}
