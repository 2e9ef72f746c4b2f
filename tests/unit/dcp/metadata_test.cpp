// DCP .metadata codec: Python's files read, rewritten byte for byte, hostile input refused.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "shardkit/dcp/metadata.hpp"

#ifndef SHARDKIT_SOURCE_DIR
#error "SHARDKIT_SOURCE_DIR must name the source root (the fixtures are under tests/fixtures/dcp)"
#endif

using namespace shardkit::dcp;
using Dims = std::vector<std::int64_t>;

namespace {

// A binary string literal, NUL bytes included.
template <std::size_t N>
std::string bin(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// The fixtures were written by tests/fixtures/dcp/make_fixtures.py with torch 2.15's dcp.save.
std::string fixture(const std::string& name) {
  const std::string path = std::string(SHARDKIT_SOURCE_DIR) + "/tests/fixtures/dcp/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const TensorStorageMetadata& tensor(const Metadata& md, const std::string& fqn) {
  const StorageMetadata* entry = md.find(fqn);
  REQUIRE(entry != nullptr);
  REQUIRE(std::holds_alternative<TensorStorageMetadata>(*entry));
  return std::get<TensorStorageMetadata>(*entry);
}

const StorageInfo& storage(const Metadata& md, const std::string& fqn,
                           const std::optional<Dims>& offset) {
  REQUIRE(md.storage_data.has_value());
  for (const auto& [index, info] : *md.storage_data) {
    if (index.fqn == fqn && index.offset == offset) return info;
  }
  FAIL("no storage_data entry for " << fqn);
  throw;  // unreachable
}

// Parsing must either succeed or throw MetadataError: anything else (a crash, bad_alloc,
// length_error, out_of_range) fails the test.
bool parses(std::string_view bytes) {
  try {
    (void)read_metadata(bytes, "input");
    return true;
  } catch (const MetadataError&) {
    return false;
  }
}

std::string error_of(std::string_view bytes) {
  try {
    (void)read_metadata(bytes, "hostile.metadata");
  } catch (const MetadataError& e) {
    return e.what();
  }
  FAIL("read_metadata accepted the input");
  return {};
}

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), to);
}

// After editing a writer output that has a single frame, make its FRAME length match again.
void refit_single_frame(std::string& pickle) {
  REQUIRE(pickle.compare(0, 3, "\x80\x04\x95") == 0);
  const std::uint64_t len = pickle.size() - 11;
  for (int i = 0; i < 8; ++i) pickle[3 + i] = static_cast<char>((len >> (8 * i)) & 0xFF);
}

Metadata small_metadata() {
  Metadata md;
  TensorStorageMetadata t;
  t.properties.dtype = "bfloat16";
  t.properties.strides = Dims{4, 1};
  t.size = {2, 4};
  t.chunks = {{{0, 0}, {1, 4}}, {{1, 0}, {1, 4}}};
  md.state_dict_metadata.emplace_back("model.w", t);
  md.state_dict_metadata.emplace_back("optimizer.param_groups.0.lr", BytesStorageMetadata{});
  md.planner_data = {{"model.w", {std::string("model"), std::string("w")}},
                     {"optimizer.param_groups.0.lr",
                      {std::string("optimizer"), std::string("param_groups"), std::int64_t{0},
                       std::string("lr")}}};
  md.storage_data = {{{"model.w", Dims{0, 0}, 0}, {"__0_0.distcp", 0, 16, std::nullopt}},
                     {{"model.w", Dims{1, 0}, 1}, {"__1_0.distcp", 0, 16, std::nullopt}},
                     {{"optimizer.param_groups.0.lr", std::nullopt, std::nullopt},
                      {"__0_0.distcp", 16, 500, std::nullopt}}};
  md.storage_meta =
      StorageMeta{"/tmp/a/b", true, "0c353a49-c92a-4825-9bfe-13739292e024", std::nullopt, {}};
  md.version = std::string(kDcpVersion);
  return md;
}

}  // namespace

TEST_CASE("dcp: a single-process dcp.save .metadata reads as Python saw it", "[dcp]") {
  const Metadata md = read_metadata(fixture("single.metadata"), "single.metadata");
  CHECK(md.state_dict_metadata.size() == 45);
  CHECK(md.state_dict_metadata.front().first == "model.0.weight");
  CHECK(md.state_dict_metadata.back().first == "extra.name");

  const auto& w = tensor(md, "model.0.weight");
  CHECK(w.properties ==
        TensorProperties{"float32", "strided", false, MemoryFormat::contiguous, false, Dims{4, 1}});
  CHECK(w.size == Dims{3, 4});
  REQUIRE(w.chunks.size() == 1);
  CHECK(w.chunks[0] == ChunkStorageMetadata{{0, 0}, {3, 4}});

  CHECK(tensor(md, "extra.bf16").properties.dtype == "bfloat16");
  CHECK(tensor(md, "extra.bf16").size == Dims{2, 3});
  CHECK(tensor(md, "extra.f8").properties.dtype == "float8_e4m3fn");
  CHECK(tensor(md, "extra.c64").properties.dtype == "complex64");
  CHECK(tensor(md, "extra.flag").properties.dtype == "bool");
  CHECK(tensor(md, "extra.i64").properties.dtype == "int64");
  CHECK(tensor(md, "extra.nhwc").properties.strides == Dims{18, 1, 6, 2});
  const auto& scalar = tensor(md, "extra.scalar");
  CHECK(scalar.size.empty());
  CHECK(scalar.properties.strides == Dims{});
  REQUIRE(scalar.chunks.size() == 1);
  CHECK(scalar.chunks[0] == ChunkStorageMetadata{{}, {}});
  CHECK(tensor(md, "optimizer.state.0.weight.exp_avg").size == Dims{3, 4});

  const StorageMetadata* lr = md.find("optimizer.param_groups.0.lr");
  REQUIRE(lr != nullptr);
  CHECK(std::holds_alternative<BytesStorageMetadata>(*lr));
  CHECK(md.find("no.such.key") == nullptr);

  REQUIRE(md.planner_data.has_value());
  CHECK(md.planner_data->size() == 45);
  for (const auto& [fqn, path] : *md.planner_data) {
    if (fqn == "extra.list.0")
      CHECK(path ==
            std::vector<PathComponent>{std::string("extra"), std::string("list"), std::int64_t{0}});
    if (fqn == "optimizer.state.0.weight.step") {
      CHECK(path == std::vector<PathComponent>{std::string("optimizer"), std::string("state"),
                                               std::string("0.weight"), std::string("step")});
    }
  }

  REQUIRE(md.storage_data.has_value());
  CHECK(md.storage_data->size() == 45);
  CHECK(storage(md, "model.0.weight", Dims{0, 0}).relative_path == "__0_0.distcp");
  CHECK(storage(md, "extra.name", std::nullopt).length > 0);
  for (const auto& [index, info] : *md.storage_data) {
    CHECK_FALSE(info.transform_descriptors.has_value());
    CHECK(index.offset.has_value() ==
          std::holds_alternative<TensorStorageMetadata>(*md.find(index.fqn)));
  }

  REQUIRE(md.storage_meta.has_value());
  CHECK(md.storage_meta->checkpoint_id == "/tmp/shardkit_dcp_fixtures/single");
  CHECK(md.storage_meta->checkpoint_id_is_path);
  CHECK(md.storage_meta->save_id.value_or("").size() == 36);
  CHECK_FALSE(md.storage_meta->load_id.has_value());
  CHECK(md.storage_meta->modules.empty());
  CHECK(md.version == std::string(kDcpVersion));
}

TEST_CASE("dcp: a 2-rank save with an empty chunk reads", "[dcp]") {
  const Metadata md = read_metadata(fixture("two_rank.metadata"), "two_rank.metadata");
  const auto& tiny = tensor(md, "model.tiny.weight");
  CHECK(tiny.size == Dims{1, 4});
  REQUIRE(tiny.chunks.size() == 2);
  CHECK(tiny.chunks[1] == ChunkStorageMetadata{{1, 0}, {0, 4}});
  CHECK(tensor(md, "model.emb.weight").chunks.size() == 2);
  CHECK(tensor(md, "model.norm.weight").properties.dtype == "bfloat16");
  CHECK(storage(md, "model.tiny.weight", Dims{1, 0}).relative_path == "__1_0.distcp");
  bool saw_index_1 = false;
  for (const auto& [index, info] : *md.storage_data) saw_index_1 |= index.index == 1;
  CHECK(saw_index_1);
  CHECK(md.find("rank0_note") != nullptr);
  CHECK(md.find("rank1_note") != nullptr);
  CHECK(md.storage_meta->checkpoint_id == "/tmp/shardkit_dcp_fixtures/two_rank");
}

TEST_CASE("dcp: the same Metadata pickled with protocols 2, 3 and 5 reads the same", "[dcp]") {
  const Metadata reference = read_metadata(fixture("single.metadata"), "single.metadata");
  for (const char* name : {"single_p2.metadata", "single_p3.metadata", "single_p5.metadata"}) {
    INFO(name);
    CHECK(read_metadata(fixture(name), name) == reference);
  }
}

TEST_CASE("dcp: the writer reproduces Python's bytes for a single-process save", "[dcp]") {
  const std::string python = fixture("single.metadata");
  const std::string ours = write_metadata(read_metadata(python, "single.metadata"));
  CHECK(ours.size() == python.size());
  CHECK(ours == python);
}

TEST_CASE("dcp: a multi-rank save writes back to the same Metadata", "[dcp]") {
  // Python's memo reuse there follows per-rank unpickling; ours differs, the content not.
  const Metadata md = read_metadata(fixture("two_rank.metadata"), "two_rank.metadata");
  CHECK(read_metadata(write_metadata(md), "rewritten") == md);
}

#ifdef SHARDKIT_PYTHON
TEST_CASE("dcp: PyTorch reads what the writer wrote as the Metadata it had saved",
          "[dcp][python]") {
  // FileSystemReader(folder).read_metadata() on our bytes must equal pickle.load of the
  // fixture, dict order and MetadataIndex.index included (python_roundtrip.py --expect).
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("shardkit_dcp_test_" + std::to_string(::getpid()));
  for (const char* name : {"single", "two_rank"}) {
    const std::string fixture_name = std::string(name) + ".metadata";
    const fs::path folder = root / name;
    fs::create_directories(folder);
    std::ofstream(folder / ".metadata", std::ios::binary)
        << write_metadata(read_metadata(fixture(fixture_name), fixture_name));
    const std::string command = std::string("'") + SHARDKIT_PYTHON + "' '" + SHARDKIT_SOURCE_DIR +
                                "/tests/unit/dcp/python_roundtrip.py' '" + folder.string() +
                                "' --expect '" + SHARDKIT_SOURCE_DIR + "/tests/fixtures/dcp/" +
                                fixture_name + "'";
    INFO(command);
    CHECK(std::system(command.c_str()) == 0);
  }
  fs::remove_all(root);
}
#endif

TEST_CASE("dcp: hand-built Metadata round-trips, edge values included", "[dcp]") {
  Metadata md = small_metadata();
  CHECK(read_metadata(write_metadata(md), "small") == md);

  // Values past every pickle size class: LONG1 ints, BINUNICODE, a string written
  // outside frames (>= 64 KiB), multi-frame output, >1000 entries (several SETITEMS
  // batches), >1000 chunks, None fields, other layouts and memory formats.
  TensorStorageMetadata big;
  big.properties = TensorProperties{"int64", "sparse_coo", true, MemoryFormat::channels_last,
                                    true,    std::nullopt};
  big.size = {std::int64_t{1} << 31, std::int64_t{1} << 40, INT64_MAX};
  for (int c = 0; c < 1001; ++c) big.chunks.push_back({{c, 0, 0}, {1, 65536, 65535}});
  const std::string huge = "h." + std::string(70000, 'y');
  md.state_dict_metadata.emplace_back(std::string(300, 'x'), big);
  md.state_dict_metadata.emplace_back(huge, BytesStorageMetadata{});
  md.state_dict_metadata.emplace_back("\xc3\xbcn\xc3\xaf.\xf0\x9f\x98\x80", BytesStorageMetadata{});
  for (int i = 0; i < 2000; ++i)
    md.state_dict_metadata.emplace_back("b." + std::to_string(i), BytesStorageMetadata{});
  md.storage_data->push_back(
      {{huge, std::nullopt, -1},
       {"__1_0.distcp", INT64_MIN, -2147483649LL, std::vector<std::string>{"stream.zstd/1"}}});
  md.planner_data->push_back({huge, {std::string("h"), std::int64_t{-5}, std::int64_t{1} << 40}});
  md.storage_meta = StorageMeta{"relative/ckpt", false, std::nullopt, std::nullopt, {"a.b", "c"}};
  const std::string bytes = write_metadata(md);
  CHECK(bytes.size() > 2 * 65536);  // several frames
  CHECK(read_metadata(bytes, "big") == md);

  Metadata bare;
  bare.state_dict_metadata.emplace_back("only", BytesStorageMetadata{});
  CHECK(read_metadata(write_metadata(bare), "bare") == bare);
  bare.state_dict_metadata.clear();
  CHECK(read_metadata(write_metadata(bare), "empty") == bare);
}

TEST_CASE("dcp: checkpoint_id is pickled as a PosixPath and read in its normal form", "[dcp]") {
  Metadata md = small_metadata();
  md.storage_meta->checkpoint_id = "//net/./share//ckpt/";
  CHECK(read_metadata(write_metadata(md), "path").storage_meta->checkpoint_id ==
        "//net/share/ckpt");
}

TEST_CASE("dcp: Python 3.13's PosixPath pickle (pathlib._local, one raw path) reads", "[dcp]") {
  std::string bytes = write_metadata(small_metadata());
  replace_once(bytes, "\x8c\x07pathlib\x94", "\x8c\x0epathlib._local\x94");
  replace_once(bytes,
               "(\x8c\x01/\x94\x8c\x03tmp\x94\x8c\x01"
               "a\x94\x8c\x01"
               "b\x94t\x94",
               "\x8c\x08/tmp/a/b\x94\x85\x94");
  refit_single_frame(bytes);
  CHECK(read_metadata(bytes, "py313").storage_meta->checkpoint_id == "/tmp/a/b");
}

TEST_CASE("dcp: the writer refuses what Python could not have written", "[dcp]") {
  Metadata md = small_metadata();
  std::get<TensorStorageMetadata>(md.state_dict_metadata[0].second).properties.dtype = "float";
  CHECK_THROWS_WITH(write_metadata(md), Catch::Contains("unknown torch dtype 'float'"));

  md = small_metadata();
  std::get<TensorStorageMetadata>(md.state_dict_metadata[0].second).properties.memory_format =
      MemoryFormat{5};
  CHECK_THROWS_AS(write_metadata(md), MetadataError);

  md = small_metadata();
  md.state_dict_metadata.emplace_back("model.w", BytesStorageMetadata{});
  CHECK_THROWS_WITH(write_metadata(md), Catch::Contains("'model.w' twice"));

  md = small_metadata();
  md.version = std::string("\xff\xfe");
  CHECK_THROWS_WITH(write_metadata(md), Catch::Contains("UTF-8"));

  md = small_metadata();
  md.storage_data->push_back(md.storage_data->front());
  md.storage_data->back().first.index = 9;  // Python's key equality ignores index
  CHECK_THROWS_AS(write_metadata(md), MetadataError);
}

TEST_CASE("dcp: a pickle naming a foreign global is refused by name", "[dcp]") {
  // What pickle.dumps(os.system("id")-style reduce) looks like at protocol 2 and 4.
  const std::string os_system_p2 =
      bin("\x80\x02"
          "cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.");
  CHECK_THAT(error_of(os_system_p2),
             Catch::Contains("'os.system'") && Catch::Contains("hostile.metadata"));
  const std::string eval_p4 =
      bin("\x80\x04\x8c\x08"
          "builtins\x94\x8c\x04"
          "eval\x94\x93\x94\x8c\x01"
          "1\x85R.");
  CHECK_THAT(error_of(eval_p4), Catch::Contains("'builtins.eval'"));

  // A foreign global deep inside an otherwise valid file: the layout reducer swapped for a
  // same-length module name.
  std::string bytes = fixture("single.metadata");
  replace_once(bytes, "torch.serialization", "importlib.machinery");
  CHECK_THAT(error_of(bytes), Catch::Contains("'importlib.machinery._get_layout'"));

  // An accepted class used where DCP never puts it is refused by the decoder.
  std::string misuse = write_metadata(small_metadata());
  replace_once(misuse, "ChunkStorageMetadata", "BytesStorageMetadata");
  CHECK_THAT(error_of(misuse), Catch::Contains("expected ChunkStorageMetadata"));
}

TEST_CASE("dcp: an object shared far more than DCP shares is refused, not expanded", "[dcp]") {
  // 700 entries referring to one TensorStorageMetadata of 3000 dims: ~12 KB that Python
  // loads, ~17 MB if every reference were copied.
  CHECK_THAT(error_of(fixture("aliased.metadata")), Catch::Contains("64 times the file's size"));
}

TEST_CASE("dcp: truncation at every length throws MetadataError", "[dcp]") {
  for (const char* name : {"single.metadata", "two_rank.metadata", "single_p2.metadata"}) {
    const std::string bytes = fixture(name);
    std::size_t accepted = 0;
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      if (parses(std::string_view(bytes).substr(0, n))) ++accepted;
    }
    INFO(name);
    CHECK(accepted == 0);
  }
}

TEST_CASE("dcp: garbage and bit flips never crash", "[dcp]") {
  CHECK_THAT(error_of(""), Catch::Contains("truncated"));
  CHECK_THAT(error_of("not a pickle"), Catch::Contains("opcode"));
  CHECK_THAT(error_of("\x80\x06."), Catch::Contains("protocol 6"));
  CHECK_THAT(error_of("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f"),
             Catch::Contains("truncated"));
  CHECK_THAT(error_of("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff."), Catch::Contains("FRAME"));
  CHECK_THAT(error_of(bin("\x80\x04j\x00\x00\x01\x00.")), Catch::Contains("memo entry 65536"));
  CHECK_THAT(error_of("\x80\x04(\x85."), Catch::Contains("underflow"));
  CHECK_THAT(error_of("\x80\x04K\x01K\x02"
                      "a."),
             Catch::Contains("not a list"));
  CHECK_THAT(error_of("\x80\x04\x8a\x09"
                      "123456789."),
             Catch::Contains("int64"));
  CHECK_THAT(error_of("\x80\x04}."), Catch::Contains("expected Metadata"));
  CHECK_THAT(error_of("\x80\x04\x8c\x02\xc3\x28."), Catch::Contains("UTF-8"));

  std::mt19937 rng(20240615);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 200, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    if (i % 2) junk.insert(0, "\x80\x04", 2);
    parses(junk);  // must not crash; the result does not matter
  }
  for (const char* name : {"single.metadata", "two_rank.metadata"}) {
    const std::string original = fixture(name);
    for (int i = 0; i < 3000; ++i) {
      std::string bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f)
        bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
      parses(bytes);
    }
  }
  SUCCEED("no crash");
}
