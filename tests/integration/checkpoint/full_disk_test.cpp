// A full disk during a checkpoint save, in every format, synchronous or in the background: every rank stops with the file and ENOSPC, `last` untouched.
//
// The disk fills in two ways. tests/fixtures/full_disk_preload.cpp (LD_PRELOAD) makes writes under
// the second checkpoint's staging folder fail with ENOSPC once a byte budget is spent, so the first
// checkpoint is always saved whole and the second always fails, at the same byte of the same file,
// on a chosen rank. And a real disk: a 100 MB tmpfs, mounted in a mount namespace of the test's
// own (unshare), that holds one checkpoint but not two.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>

#include "../distributed/launch.hpp"
#include "skip.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// The LD_PRELOAD library that fills the disk.
std::string full_disk_preload() { return std::string(SHARDKIT_FIXTURE_DIR) + "/preload/full_disk_preload.so"; }

/// A 2-rank fsdp run of 4 steps in `format`, saving at steps 2 and 4. The blocks are wide enough
/// that each rank's piece of a block weight (768 x 768 floats, 2.4 MB) is larger than the DCP
/// writer's 1 MiB buffer, so DCP's data files are written from inside LibTorch's zip writer.
std::vector<std::string> run_args(const std::string& out, const std::string& format) {
  return tiny_run(out, {"--steps=4", "--save_freq=2", "--batch_size=4", "--policy.hidden_dim=768",
                        "--distributed_backend=fsdp", "--parallelism.dp_shard=2", "--checkpoint_format=" + format});
}

/// The line in which rank `rank` reported shardkit-train's error ("" when it printed none).
std::string error_line(const std::string& output, int rank) {
  std::istringstream lines(output);
  const std::string prefix = "[rank" + std::to_string(rank) + "]: shardkit-train: error: ";
  for (std::string line; std::getline(lines, line);)
    if (contains(line, prefix)) return line;
  return "";
}

/// Whose disk is full, and after how many bytes.
struct FullDisk {
  const char* what;
  const char* rank;   ///< SHARDKIT_TEST_FULL_RANK ("": every rank)
  const char* bytes;  ///< SHARDKIT_TEST_DISK_BYTES
};

}  // namespace

TEST_CASE("a full disk during a save stops every rank with the file and ENOSPC, and the run resumes from last") {
  const FullDisk cases[] = {
      // Rank 1 alone, at its first byte: in dcp inside LibTorch's zip writer (which ended in
      // SIGABRT), in safetensors at its generator state, its only file; rank 0 saves fine.
      {"rank 1's disk is full", "1", "0"},
      // Every rank, part-way through a file: a short write, then ENOSPC.
      {"every rank's disk fills after 100 kB", "", "100000"},
  };
  for (const std::string format : {"dcp", "safetensors", "safetensors_dcp"}) {
    for (const auto& full : cases) {
      INFO(format << ": " << full.what);
      TempDir dir("sk-full-disk");
      const auto out = fs::weakly_canonical(dir.path()).string() + "/run";  // as /proc/self/fd names it
      const auto checkpoints = out + "/checkpoints";
      const auto staging = checkpoints + "/.tmp-000004";
      const auto r = run_command("LD_PRELOAD=" + shell_quote(full_disk_preload()) +
                                 " SHARDKIT_TEST_FULL_DIR=" + shell_quote(staging) +
                                 " SHARDKIT_TEST_DISK_BYTES=" + full.bytes +
                                 " SHARDKIT_TEST_FULL_RANK=" + full.rank + " " +
                                 launch_command(2, run_args(out, format)));
      INFO(r.output);
      CHECK(r.exit_code == 1);
      CHECK_FALSE(contains(r.output, "SIGABRT"));
      CHECK_FALSE(contains(r.output, "terminate called"));
      CHECK_FALSE(contains(r.output, "killed by signal"));
      CHECK_FALSE(contains(r.output, "ignored SIGTERM"));  // no rank was left waiting for the other
      // Every rank stops by itself, naming the file that could not be written and why.
      for (int rank = 0; rank < 2; ++rank) {
        const auto line = error_line(r.output, rank);
        INFO("rank " << rank << ": " << line);
        CHECK(contains(line, "checkpoint " + checkpoints + "/000004 was not saved: "));
        CHECK(contains(line, staging + "/"));
        CHECK(contains(line, "No space left on device"));
        CHECK(contains(line, "this rank's part of the checkpoint is about "));  // what it needed
        CHECK(contains(line, " was free there when the write failed"));
        CHECK(contains(line, checkpoints + "/last still points to 000002"));
      }
      // `last` is untouched and nothing of the failed save is left.
      CHECK(fs::read_symlink(checkpoints + "/last") == "000002");
      std::set<std::string> left;
      for (const auto& e : fs::directory_iterator(checkpoints)) left.insert(e.path().filename().string());
      const std::set<std::string> first_only{"000002", "last"};
      CHECK(left == first_only);

      const auto resumed = launch(2, {"--resume=true", "--output_dir=" + out});
      INFO(resumed.output);
      CHECK(resumed.exit_code == 0);
      CHECK(contains(resumed.output, "at step 2"));
      CHECK(fs::read_symlink(checkpoints + "/last") == "000004");
    }
  }
}

TEST_CASE("a full disk during an asynchronous save stops every rank at the next step, or warns, and loses nothing") {
  for (const std::string format : {"dcp", "safetensors", "safetensors_dcp"}) {
    for (const std::string on_error : {"stop", "warn"}) {
      if (on_error == "warn" && format != "dcp") continue;  // what warn does is the format's business no more than stop's
      INFO(format << ", --checkpoint.on_error=" << on_error);
      TempDir dir("sk-full-disk-async");
      const auto out = fs::weakly_canonical(dir.path()).string() + "/run";
      const auto checkpoints = out + "/checkpoints";
      const auto staging = checkpoints + "/.tmp-000004";
      auto args = run_args(out, format);
      for (const auto& a : {std::string("--steps=6"), std::string("--checkpoint.async_mode=async"), "--checkpoint.on_error=" + on_error})
        args.push_back(a);
      // Rank 1's disk is full for the second save (step 4) only: its background writer fails there.
      const auto r = run_command("LD_PRELOAD=" + shell_quote(full_disk_preload()) + " SHARDKIT_TEST_FULL_DIR=" +
                                 shell_quote(staging) + " SHARDKIT_TEST_DISK_BYTES=0 SHARDKIT_TEST_FULL_RANK=1 " +
                                 launch_command(2, args));
      INFO(r.output);
      CHECK_FALSE(contains(r.output, "terminate called"));
      CHECK_FALSE(contains(r.output, "killed by signal"));
      CHECK_FALSE(contains(r.output, "ignored SIGTERM"));
      CHECK(contains(r.output, "the background save of a checkpoint failed: checkpoint " + checkpoints +
                                   "/000004 was not saved: "));
      CHECK(contains(r.output, "No space left on device"));
      std::set<std::string> left;
      for (const auto& e : fs::directory_iterator(checkpoints)) left.insert(e.path().filename().string());
      if (on_error == "warn") {
        CHECK(r.exit_code == 0);
        CHECK(contains(r.output, "Training goes on (--checkpoint.on_error=warn)"));
        CHECK(fs::read_symlink(checkpoints + "/last") == "000006");
        CHECK(left == std::set<std::string>{"000002", "000006", "last"});
        continue;
      }
      CHECK(r.exit_code == 1);
      for (int rank = 0; rank < 2; ++rank) {
        const auto line = error_line(r.output, rank);
        INFO("rank " << rank << ": " << line);
        CHECK(contains(line, "the background save of a checkpoint failed: checkpoint " + checkpoints + "/000004"));
        CHECK(contains(line, staging + "/"));
        CHECK(contains(line, "No space left on device"));
        CHECK(contains(line, checkpoints + "/last still points to 000002"));
        CHECK(contains(line, "Training stopped (--checkpoint.on_error=stop"));
      }
      CHECK(fs::read_symlink(checkpoints + "/last") == "000002");
      CHECK(left == std::set<std::string>{"000002", "last"});

      const auto resumed = launch(2, {"--resume=true", "--output_dir=" + out});
      INFO(resumed.output);
      CHECK(resumed.exit_code == 0);
      CHECK(contains(resumed.output, "at step 2"));
      CHECK(fs::read_symlink(checkpoints + "/last") == "000006");
    }
  }
}

namespace {

/// The unshare command that gives a shell a mount namespace of its own in which it can mount a
/// tmpfs (as root: -m; otherwise a user namespace too: -rm), or "" when this machine allows
/// neither; `why` then says what the kernel answered.
std::string private_mounts(const std::string& probe_dir, std::string& why) {
  for (const std::string flags : {"-m", "-rm"}) {
    const auto cmd = "unshare " + flags + " sh -c " +
                     shell_quote("mount -t tmpfs -o size=1m tmpfs " + shell_quote(probe_dir));
    const auto r = run_command(cmd);
    if (r.exit_code == 0) return "unshare " + flags;
    why = r.output;
  }
  return "";
}

/// The value printed by the namespace's script as "key=value" ("" when it printed none).
std::string printed(const std::string& output, const std::string& key) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

}  // namespace

TEST_CASE("a save that fills a real disk (a small tmpfs) stops every rank, leaves last, and resumes exactly") {
  TempDir probe("sk-tmpfs-probe");
  std::string why;
  const auto unshare = private_mounts(probe.path(), why);
  if (unshare.empty())
    SHARDKIT_SKIP("this machine lets no process mount a tmpfs in a mount namespace of its own "
                  "(unshare -m and unshare -rm failed: " << why << ")");
  for (const std::string format : {"dcp", "safetensors", "safetensors_dcp"}) {
    for (const std::string mode : {"disabled", "async"}) {
      INFO(format << ", --checkpoint.async_mode=" << mode);
      TempDir dir("sk-tmpfs-full");
      const auto disk = fs::weakly_canonical(dir.path()).string() + "/disk";
      fs::create_directories(disk);
      const auto out = disk + "/run";
      const auto checkpoints = out + "/checkpoints";
      const auto staging = checkpoints + "/.tmp-000004";
      auto args = run_args(out, format);
      args.push_back("--checkpoint.async_mode=" + mode);
      if (mode == "async") args.push_back("--steps=6");  // the failure of step 4's save is seen at step 6's
      // A checkpoint of this run takes 57 MB (76 MB in safetensors_dcp): 100 MB holds one, not two.
      // The tmpfs is gone when the namespace's shell ends, so the shell reports what the test checks:
      // the run's exit and output, what is left, then grows the disk and resumes.
      const std::string script =
          "mount -t tmpfs -o size=100m tmpfs " + shell_quote(disk) + " || exit 3\n" +
          launch_command(2, args) + " > " + shell_quote(dir.path() + "/first.log") + " 2>&1\n" +
          "echo first_exit=$?\n" +
          "echo last=$(readlink " + shell_quote(checkpoints + "/last") + ")\n" +
          "echo left=$(ls -A " + shell_quote(checkpoints) + " | tr '\\n' ' ')\n" +
          "mount -o remount,size=400m " + shell_quote(disk) + " || exit 4\n" +
          launch_command(2, {"--resume=true", "--output_dir=" + out}) + " > " +
          shell_quote(dir.path() + "/resumed.log") + " 2>&1\n" +
          "echo resumed_exit=$?\n" +
          "echo resumed_last=$(readlink " + shell_quote(checkpoints + "/last") + ")\n";
      const auto r = run_command(unshare + " sh -c " + shell_quote(script));
      const auto first = slurp(dir.path() + "/first.log");
      INFO(r.output);
      INFO(first);
      REQUIRE(r.exit_code == 0);
      CHECK(printed(r.output, "first_exit") == "1");
      CHECK_FALSE(contains(first, "terminate called"));
      CHECK_FALSE(contains(first, "killed by signal"));
      CHECK_FALSE(contains(first, "ignored SIGTERM"));  // no rank was left waiting for the other
      for (int rank = 0; rank < 2; ++rank) {
        const auto line = error_line(first, rank);
        INFO("rank " << rank << ": " << line);
        CHECK(contains(line, "checkpoint " + checkpoints + "/000004 was not saved: "));
        CHECK(contains(line, staging + "/"));
        CHECK(contains(line, "No space left on device"));
        CHECK(contains(line, checkpoints + "/last still points to 000002"));
        if (mode == "disabled") {
          CHECK(contains(line, "this rank's part of the checkpoint is about "));
          CHECK(contains(line, " was free there when the write failed"));
        } else {
          CHECK(contains(line, "the background save of a checkpoint failed"));
        }
      }
      CHECK(printed(r.output, "last") == "000002");
      CHECK(printed(r.output, "left") == "000002 last");  // the partial folder was removed

      const auto resumed = slurp(dir.path() + "/resumed.log");
      INFO(resumed);
      CHECK(printed(r.output, "resumed_exit") == "0");
      CHECK(contains(resumed, "at step 2"));
      CHECK(printed(r.output, "resumed_last") == (mode == "async" ? "000006" : "000004"));
    }
  }
}
