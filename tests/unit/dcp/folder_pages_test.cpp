// DCP load reads only the parts of the data file it copies from (the file is mapped, not read whole).
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shardkit/dcp/folder.hpp"
#include "test_support.hpp"

namespace dcp = shardkit::dcp;

namespace {

// Bytes of `path` in the page cache, counted with mincore() over a mapping of the file.
std::int64_t resident_bytes(const std::string& path, bool evict_first) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  struct stat st {};
  ::fstat(fd, &st);
  if (evict_first) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const auto page = ::sysconf(_SC_PAGESIZE);
  void* map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(map != MAP_FAILED);
  std::vector<unsigned char> in((static_cast<std::size_t>(st.st_size) + page - 1) / page);
  ::mincore(map, static_cast<std::size_t>(st.st_size), in.data());
  ::munmap(map, static_cast<std::size_t>(st.st_size));
  std::int64_t pages = 0;
  for (const auto flag : in) pages += flag & 1;
  return pages * page;
}

}  // namespace

TEST_CASE("loading a few rows of a large saved chunk reads about those rows only", "[dcp][folder]") {
  shardkit::test::TempDir tmp("sk-dcp-pages");
  const std::int64_t rows = 1024, cols = 16384;  // 64 MiB of float32 in one item
  const auto full = torch::arange(rows * cols, torch::kFloat).reshape({rows, cols});
  shardkit::ShardedState state;
  state.add("model.big", full, shardkit::ShardLayout::whole({rows, cols}), shardkit::Replicas::none());
  const auto dir = tmp / "folder";
  dcp::save_folder(state, "model.", dir, nullptr);
  const auto data = dir + "/" + dcp::data_file_name(0);
  // Measuring needs a file system that can drop a file's clean pages (not tmpfs).
  REQUIRE(resident_bytes(data, /*evict_first=*/true) < (1 << 20));

  shardkit::ShardedState wanted;
  shardkit::ShardLayout layout;
  layout.global_shape = {rows, cols};
  layout.chunks = {{{{512, 0}, {4, cols}}, 0}};  // rows 512-515: 256 KiB from the middle
  auto part = torch::zeros({4, cols});
  wanted.add("model.big", part, layout, shardkit::Replicas::none());
  dcp::load_folder(wanted, "model.", dir);
  CHECK(torch::equal(part, full.narrow(0, 512, 4)));
  const auto read = resident_bytes(data, /*evict_first=*/false);
  INFO("resident after the load: " << read << " of " << rows * cols * 4 << " bytes");
  CHECK(read < 4 * (1 << 20));  // the rows, the pickle and the zip directory; whole: 64 MiB
}
