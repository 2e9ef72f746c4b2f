// shardkit-run's command line: usage errors come before any process starts, with exit code 2.
#include <catch2/catch.hpp>

#include <filesystem>

#include "launcher_test_support.hpp"

using namespace shardkit::test;
using namespace shardkit::test::launcher;

TEST_CASE("shardkit-run --help lists the torchrun flags", "[launcher][cli]") {
  const auto r = run_launcher("--help");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  for (const char* flag : {"--nproc-per-node", "--nnodes", "--node-rank", "--master-addr",
                           "--master-port", "--rdzv-endpoint", "--max-restarts", "--log-dir",
                           "--grace-period-s", "--standalone"})
    CHECK(contains(r.output, flag));
}

TEST_CASE("shardkit-run refuses --nproc-per-node=0 and negative counts", "[launcher][cli]") {
  const auto zero = run_launcher("--nproc-per-node=0 true");
  INFO(zero.output);
  CHECK(zero.exit_code == 2);
  CHECK(contains(zero.output, "--nproc-per-node=0: need at least one process per node"));
  const auto negative = run_launcher("--nproc_per_node -1 true");
  INFO(negative.output);
  CHECK(negative.exit_code == 2);
  CHECK(contains(negative.output, "--nproc-per-node=-1: need at least one process per node"));
  const auto text = run_launcher("--nproc-per-node=two true");
  INFO(text.output);
  CHECK(text.exit_code == 2);
  CHECK(contains(text.output, "--nproc-per-node=two: expected a whole number"));
}

TEST_CASE("shardkit-run names an unknown flag and suggests the right one", "[launcher][cli]") {
  const auto r = run_launcher("--nproc-per-nod=2 true");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "unknown flag '--nproc-per-nod'"));
  CHECK(contains(r.output, "did you mean --nproc-per-node?"));
  const auto underscore = run_launcher("--max_restart=1 true");
  INFO(underscore.output);
  CHECK(underscore.exit_code == 2);
  CHECK(contains(underscore.output, "did you mean --max-restarts?"));
}

TEST_CASE("shardkit-run without a program is a usage error", "[launcher][cli]") {
  const auto bare = run_launcher("--nproc-per-node=2");
  INFO(bare.output);
  CHECK(bare.exit_code == 2);
  CHECK(contains(bare.output, "no program to run"));
  const auto dashes = run_launcher("--nproc-per-node=2 --");
  INFO(dashes.output);
  CHECK(dashes.exit_code == 2);
  CHECK(contains(dashes.output, "no program to run"));
  const auto missing_value = run_launcher("--master-port");
  INFO(missing_value.output);
  CHECK(missing_value.exit_code == 2);
  CHECK(contains(missing_value.output, "--master-port needs a value"));
}

TEST_CASE("shardkit-run refuses elastic node ranges and out-of-range node ranks", "[launcher][cli]") {
  const auto range = run_launcher("--nnodes=1:4 true");
  INFO(range.output);
  CHECK(range.exit_code == 2);
  CHECK(contains(range.output, "--nnodes=1:4: elastic ranges are not supported"));
  const auto rank = run_launcher("--nnodes=2 --node-rank=2 --master-port=29555 true");
  INFO(rank.output);
  CHECK(rank.exit_code == 2);
  CHECK(contains(rank.output, "--node-rank=2"));
  const auto port = run_launcher("--master-port=70000 true");
  INFO(port.output);
  CHECK(port.exit_code == 2);
  CHECK(contains(port.output, "--master-port=70000"));
  const auto backend = run_launcher("--rdzv-backend=etcd true");
  INFO(backend.output);
  CHECK(backend.exit_code == 2);
  CHECK(contains(backend.output, "--rdzv-backend=etcd"));
}

TEST_CASE("shardkit-run names a program that does not exist", "[launcher][cli]") {
  const auto r = run_launcher("--master-port=0 no-such-program-shardkit");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "'no-such-program-shardkit' was not found on PATH"));
}

TEST_CASE("shardkit-run without the gloo plugin says which plugin it needs and where it looked",
          "[launcher][cli]") {
  // A copy of the launcher outside the build tree has no plugin folder next to it.
  TempDir dir("shardkit-run-noplugin");
  std::filesystem::create_directories(dir / "bin");
  std::filesystem::copy_file(launcher_path(), dir / "bin/shardkit-run");
  const auto r = run_command("env -u SHARDKIT_PLUGIN_PATH " + shell_quote(dir / "bin/shardkit-run") +
                             " --master-port=0 true");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "libshardkit-comm-gloo.so"));
  CHECK(contains(r.output, "SHARDKIT_PLUGIN_PATH"));
}

TEST_CASE("--nproc-per-node accepts auto, cpu and gpu only, and gpu needs a GPU", "[launcher][cli]") {
  const auto word = run_launcher("--nproc-per-node=many true");
  INFO(word.output);
  CHECK(word.exit_code == 2);
  CHECK(contains(word.output, "--nproc-per-node=many: expected a whole number, auto"));
  const auto gpu = run_command("CUDA_VISIBLE_DEVICES= " + shell_quote(launcher_path()) +
                               " --nproc-per-node=gpu true");
  INFO(gpu.output);
  CHECK(gpu.exit_code == 2);
  CHECK(contains(gpu.output, "--nproc-per-node=gpu: CUDA is not available"));
}

TEST_CASE("accelerate's spellings: a total that does not divide over machines, mixed spellings, a precision",
          "[launcher][cli][accelerate]") {
  const auto uneven = run_launcher("--num_processes=3 --num_machines=2 --main_process_port=29500 true");
  INFO(uneven.output);
  CHECK(uneven.exit_code == 2);
  CHECK(contains(uneven.output, "--num-processes=3 is accelerate's number of processes over all 2 machine(s)"));
  const auto both = run_launcher("--num_processes=2 --nproc-per-node=2 true");
  INFO(both.output);
  CHECK(both.exit_code == 2);
  CHECK(contains(both.output, "--num-processes=2 and --nproc-per-node=2 set the same thing"));
  const auto ports = run_launcher("--main_process_port=29501 --master-port=29502 true");
  INFO(ports.output);
  CHECK(ports.exit_code == 2);
  CHECK(contains(ports.output, "--main-process-port=29501 and --master-port=29502 set the same thing"));
  const auto bf16 = run_launcher("--mixed_precision=bf16 true");
  INFO(bf16.output);
  CHECK(bf16.exit_code == 2);
  CHECK(contains(bf16.output, "--accelerator.mixed_precision=bf16"));
}
