// The run folder's lock: one holder at a time, released with its holder, and a failed start leaves nothing.
//
// RunLock takes flock(LOCK_EX | LOCK_NB) on a descriptor of its own (open() per acquire), and
// flock locks belong to the open file description: two RunLocks in one process conflict exactly
// as two processes do, so the refusal is tested without a second process.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../../../apps/shardkit-train/src/run_lock.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using shardkit::test::contains;
using shardkit::test::slurp;
using shardkit::test::TempDir;
using shardkit::train::RunLock;

TEST_CASE("a run folder locked by one RunLock is refused to a second, naming the holder's pid", "[train][run_lock]") {
  TempDir tmp;
  const auto dir = tmp / "run";
  const auto pid = std::to_string(::getpid());

  RunLock first;
  REQUIRE(first.acquire(dir) == "");
  first.started();
  CHECK(slurp(dir + "/.lock") == pid + "\n");

  RunLock second;
  const auto why = second.acquire(dir);
  INFO(why);
  CHECK(contains(why, "--output_dir=" + dir + " is in use by another run (process " + pid + " holds " + dir +
                          "/.lock)"));
  CHECK(contains(why, "choose another --output_dir"));
}

TEST_CASE("a run folder's lock is released when its RunLock is destroyed", "[train][run_lock]") {
  TempDir tmp;
  const auto dir = tmp / "run";
  {
    RunLock first;
    REQUIRE(first.acquire(dir) == "");
    first.started();
  }
  CHECK(fs::is_directory(dir));  // a started run keeps its folder
  RunLock next;
  CHECK(next.acquire(dir) == "");
}

TEST_CASE("an unstarted RunLock removes the folders it created, and only those", "[train][run_lock]") {
  TempDir tmp;
  SECTION("folders it made") {
    {
      RunLock lock;
      REQUIRE(lock.acquire(tmp / "outer/inner/run") == "");
      CHECK(fs::is_directory(tmp / "outer/inner/run"));
    }
    CHECK_FALSE(fs::exists(tmp / "outer"));
    CHECK(fs::is_directory(tmp.path()));
  }
  SECTION("an existing folder keeps its files; only the lock file it made goes") {
    const auto dir = tmp / "existing";
    fs::create_directories(dir);
    std::ofstream(dir + "/keep.txt") << "data\n";
    {
      RunLock lock;
      REQUIRE(lock.acquire(dir) == "");
      CHECK(fs::exists(dir + "/.lock"));
    }
    CHECK(fs::is_directory(dir));
    CHECK(slurp(dir + "/keep.txt") == "data\n");
    CHECK_FALSE(fs::exists(dir + "/.lock"));
  }
  SECTION("a started run keeps the lock file") {
    const auto dir = tmp / "kept";
    {
      RunLock lock;
      REQUIRE(lock.acquire(dir) == "");
      lock.started();
    }
    CHECK(fs::exists(dir + "/.lock"));
  }
}

TEST_CASE("undo_failed_start removes an unstarted run's folders while its RunLock lives", "[train][run_lock]") {
  TempDir tmp;
  RunLock lock;
  REQUIRE(lock.acquire(tmp / "fresh/run") == "");
  REQUIRE(fs::is_directory(tmp / "fresh/run"));
  shardkit::train::undo_failed_start();  // what a multi-process run leaving with std::_Exit calls
  CHECK_FALSE(fs::exists(tmp / "fresh"));
}

TEST_CASE("an --output_dir that is a file is refused", "[train][run_lock]") {
  TempDir tmp;
  const auto file = tmp / "not-a-folder";
  std::ofstream(file) << "x";
  RunLock lock;
  CHECK(lock.acquire(file) == "--output_dir=" + file + " exists and is not a folder");
  CHECK(slurp(file) == "x");
}
