// safetensors round trips through files and memory, and the writer's byte layout.
#include <catch2/catch.hpp>
#include <cstring>

#include "safetensors_test_support.hpp"
#include "shardkit/safetensors.hpp"

namespace st = shardkit::safetensors;
using shardkit_test::format_error_of;

namespace {

// Distinct bytes per tensor so a mix-up between tensors shows.
std::vector<std::uint8_t> pattern(std::size_t n, int seed) {
  std::vector<std::uint8_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint8_t>((i * 31 + static_cast<std::size_t>(seed) * 7 + 3) % 251);
  return out;
}

std::vector<std::uint8_t> bytes_of(const st::TensorView& view) {
  return std::vector<std::uint8_t>(view.data, view.data + view.nbytes);
}

}  // namespace

TEST_CASE("dtype names, sizes and parsing", "[safetensors]") {
  const std::vector<std::pair<st::DType, std::size_t>> expected_sizes = {
      {st::DType::BOOL, 1}, {st::DType::U8, 1},      {st::DType::I8, 1},     {st::DType::I16, 2},
      {st::DType::U16, 2},  {st::DType::F16, 2},     {st::DType::BF16, 2},   {st::DType::I32, 4},
      {st::DType::U32, 4},  {st::DType::F32, 4},     {st::DType::F64, 8},    {st::DType::I64, 8},
      {st::DType::U64, 8},  {st::DType::F8_E5M2, 1}, {st::DType::F8_E4M3, 1}};
  for (const auto& [dtype, size] : expected_sizes) {
    CHECK(st::dtype_size(dtype) == size);
    CHECK(st::parse_dtype(st::dtype_name(dtype)) == dtype);
  }
  CHECK(std::string(st::dtype_name(st::DType::BF16)) == "BF16");
  CHECK(std::string(st::dtype_name(st::DType::F8_E4M3)) == "F8_E4M3");
  CHECK_FALSE(st::parse_dtype("F128").has_value());
  CHECK_FALSE(st::parse_dtype("bf16").has_value());
}

TEST_CASE("every dtype round-trips through a file, with scalars, empty tensors and metadata",
          "[safetensors]") {
  std::vector<std::vector<std::uint8_t>> storage;
  std::vector<st::TensorRef> refs;
  storage.reserve(3 * std::size(st::kAllDTypes));
  int seed = 0;
  for (st::DType dtype : st::kAllDTypes) {
    const std::string name = st::dtype_name(dtype);
    const std::size_t size = st::dtype_size(dtype);
    storage.push_back(pattern(6 * size, ++seed));
    refs.push_back({"full." + name, dtype, {2, 3}, storage.back().data(), storage.back().size()});
    storage.push_back(pattern(size, ++seed));
    refs.push_back({"scalar." + name, dtype, {}, storage.back().data(), storage.back().size()});
    refs.push_back({"empty." + name, dtype, {4, 0, 2}, nullptr, 0});
  }
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"note", "héllo \"quoted\"\n"}};

  shardkit_test::TempDir dir;
  const std::string path = dir.file("all.safetensors");
  st::write_file(path, refs, metadata);
  const auto on_disk = shardkit_test::read_bytes(path);
  CHECK(on_disk == st::serialize(refs, metadata));

  const st::File file = st::File::open(path);
  CHECK(file.path() == path);
  CHECK(file.metadata() == metadata);
  REQUIRE(file.names().size() == refs.size());
  for (const st::TensorRef& ref : refs) {
    INFO(ref.name);
    REQUIRE(file.contains(ref.name));
    const st::TensorView& view = file.get(ref.name);
    CHECK(view.dtype == ref.dtype);
    CHECK(view.shape == ref.shape);
    REQUIRE(view.nbytes == ref.nbytes);
    if (ref.nbytes) CHECK(std::memcmp(view.data, ref.data, ref.nbytes) == 0);
  }
  CHECK_FALSE(file.contains("full.f32"));
}

TEST_CASE("a file written in many calls is the bytes serialize gives", "[safetensors]") {
  // The writer hands the disk 16 MiB at a time (write-behind) and at most IOV_MAX pieces per
  // call: 1500 small tensors, and large ones that end off every piece boundary, must all land
  // in order, whole.
  std::vector<std::vector<std::uint8_t>> storage;
  std::vector<st::TensorRef> refs;
  storage.reserve(1504);
  for (int i = 0; i < 1500; ++i) {
    storage.push_back(pattern(4 * static_cast<std::size_t>(1 + i % 7), i));
    refs.push_back({"small." + std::to_string(i), st::DType::F32, {1 + i % 7}, storage.back().data(),
                    storage.back().size()});
  }
  constexpr std::int64_t kMiB = 1 << 20;
  for (const std::int64_t n : {5 * kMiB, 16 * kMiB + 3, 9 * kMiB, std::int64_t{1}}) {
    storage.push_back(pattern(static_cast<std::size_t>(n), static_cast<int>(n % 97)));
    refs.push_back({"large." + std::to_string(n), st::DType::U8, {n}, storage.back().data(), storage.back().size()});
  }
  shardkit_test::TempDir dir;
  const std::string path = dir.file("many.safetensors");
  st::write_file(path, refs);
  CHECK(shardkit_test::read_bytes(path) == st::serialize(refs));
}

TEST_CASE("no tensors and no metadata is a valid file", "[safetensors]") {
  const auto bytes = st::serialize({});
  CHECK(bytes == shardkit_test::with_length(8, "{}      "));
  const auto file = st::File::from_bytes(bytes, "empty");
  CHECK(file.names().empty());
  CHECK(file.metadata().empty());
}

TEST_CASE("the writer lays out files exactly as the reference does", "[safetensors]") {
  // Expected bytes produced by the reference (Python safetensors 0.8.0) for these tensors:
  // dtype order descending by the reference's enum, then names; header padded with spaces.
  const std::vector<std::uint8_t> a = {0x00, 0x00, 0x80, 0x3f}, b = {1, 2, 3, 4}, e = {1, 2, 3};
  const std::vector<std::uint8_t> s(8, 1);
  const std::vector<st::TensorRef> refs = {{"b", st::DType::BF16, {2}, b.data(), 4},
                                           {"a", st::DType::F32, {1}, a.data(), 4},
                                           {"e", st::DType::F8_E4M3, {3}, e.data(), 3},
                                           {"s", st::DType::I64, {}, s.data(), 8},
                                           {"z", st::DType::I64, {0, 3}, nullptr, 0}};
  const std::string header = R"({"__metadata__":{"k":"v)"
                             "\xc3\xa9"
                             R"(\u0001\"/)"
                             "\x7f"
                             R"("},)"
                             R"("s":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                             R"("z":{"dtype":"I64","shape":[0,3],"data_offsets":[8,8]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                             R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[12,16]},)"
                             R"("e":{"dtype":"F8_E4M3","shape":[3],"data_offsets":[16,19]}})"
                             "      ";
  REQUIRE(header.size() == 320);
  std::string data(8, '\x01');
  data += std::string("\x00\x00\x80\x3f\x01\x02\x03\x04\x01\x02\x03", 11);
  const auto expected = shardkit_test::with_length(320, header + data);
  CHECK(st::serialize(refs, {{"k", "v\xc3\xa9\x01\"/\x7f"}}) == expected);

  const auto file = st::File::from_bytes(expected, "reference");
  CHECK(file.names() == std::vector<std::string>{"s", "z", "a", "b", "e"});
  CHECK(file.metadata().at("k") == "v\xc3\xa9\x01\"/\x7f");
}

TEST_CASE("names() follows the data offsets, whatever order the header lists", "[safetensors]") {
  const auto file = st::File::from_bytes(
      shardkit_test::image(R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]},)"
                           R"("a":{"dtype":"U8","shape":[2,2],"data_offsets":[0,4]}})",
                           8),
      "unordered");
  CHECK(file.names() == std::vector<std::string>{"a", "b"});
  CHECK(file.get("b").data == file.get("a").data + 4);
}

TEST_CASE("File is movable and reports missing tensors by file and name", "[safetensors]") {
  const std::vector<std::uint8_t> data = pattern(8, 1);
  shardkit_test::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  st::write_file(path, {{"x", st::DType::F64, {1}, data.data(), 8}});

  st::File first = st::File::open(path);
  st::File moved(std::move(first));
  CHECK(bytes_of(moved.get("x")) == data);
  st::File assigned = st::File::from_bytes(st::serialize({}), "other");
  assigned = std::move(moved);
  CHECK(assigned.path() == path);
  CHECK(bytes_of(assigned.get("x")) == data);
  CHECK(format_error_of([&] { assigned.get("y"); }) ==
        path + ": no tensor named 'y'; the file holds 1 tensors (e.g. 'x')");
}

TEST_CASE("rewriting a path keeps an open File's bytes intact", "[safetensors]") {
  const std::vector<std::uint8_t> old_bytes = pattern(64, 1), new_bytes = pattern(64, 2);
  shardkit_test::TempDir dir;
  const std::string path = dir.file("r.safetensors");
  st::write_file(path, {{"x", st::DType::U8, {64}, old_bytes.data(), 64}});
  const st::File old_file = st::File::open(path);
  st::write_file(path, {{"x", st::DType::U8, {64}, new_bytes.data(), 64}});
  CHECK(bytes_of(old_file.get("x")) == old_bytes);
  CHECK(bytes_of(st::File::open(path).get("x")) == new_bytes);
  CHECK(
      std::distance(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()),
                    std::filesystem::directory_iterator()) == 1);  // no temporary left behind
}

TEST_CASE("the writer refuses input that would make an invalid file", "[safetensors]") {
  const std::vector<std::uint8_t> four(4, 0);
  auto error = [](const std::vector<st::TensorRef>& refs,
                  const std::map<std::string, std::string>& md = {}) {
    return format_error_of([&] { st::serialize(refs, md); });
  };
  CHECK_THAT(error({{"w", st::DType::F32, {2}, four.data(), 4}}),
             Catch::Contains("tensor 'w' has 4 bytes but shape [2] of F32 needs 8"));
  CHECK_THAT(
      error({{"w", st::DType::U8, {4}, four.data(), 4}, {"w", st::DType::U8, {4}, four.data(), 4}}),
      Catch::Contains("tensor 'w' is given twice"));
  CHECK_THAT(error({{"__metadata__", st::DType::U8, {4}, four.data(), 4}}),
             Catch::Contains("a tensor cannot be called '__metadata__'"));
  CHECK_THAT(error({{"bad\xff", st::DType::U8, {4}, four.data(), 4}}),
             Catch::Contains("is not valid UTF-8"));
  CHECK_THAT(error({}, {{"k", "\xc0\xaf"}}),
             Catch::Contains("metadata value of 'k' is not valid UTF-8"));
  CHECK_THAT(error({{"w", st::DType::U8, {-4}, four.data(), 4}}),
             Catch::Contains("negative dimension"));
  CHECK_THAT(error({{"w", st::DType::U8, {4}, nullptr, 4}}), Catch::Contains("null data pointer"));
  shardkit_test::TempDir dir;
  CHECK_THAT(
      format_error_of([&] {
        st::write_file(dir.file("x.safetensors"), {{"w", st::DType::F32, {2}, four.data(), 4}});
      }),
      Catch::StartsWith(dir.file("x.safetensors") + ": tensor 'w'"));
}
