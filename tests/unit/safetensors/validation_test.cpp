// Malformed safetensors files: one per validation rule, truncations, and oversized headers.
#include <catch2/catch.hpp>

#include "safetensors_test_support.hpp"
#include "shardkit/safetensors.hpp"

namespace st = shardkit::safetensors;
using shardkit_test::format_error_of;
using shardkit_test::image;
using shardkit_test::with_length;

namespace {

// The FormatError message from validating `bytes` as "model.safetensors"; "" if valid.
std::string error_for(std::vector<std::uint8_t> bytes) {
  return format_error_of([&] { st::File::from_bytes(std::move(bytes), "model.safetensors"); });
}

std::string error_for_header(const std::string& header, std::size_t data_bytes) {
  return error_for(image(header, data_bytes));
}

const std::string kW = R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})";

}  // namespace

TEST_CASE("a well-formed hand-made header is accepted", "[safetensors][validation]") {
  CHECK(error_for_header("{" + kW + "}", 16) == "");
  CHECK(error_for_header("{}", 0) == "");
  CHECK(error_for_header("{\"__metadata__\":null," + kW + "}   ", 16) == "");
}

TEST_CASE("the 8-byte length prefix and the header size limit", "[safetensors][validation]") {
  SECTION("file shorter than 8 bytes") {
    const auto msg = error_for({1, 0, 0});
    CHECK_THAT(msg,
               Catch::Contains("model.safetensors: file is 3 bytes, too short for the 8-byte"));
  }
  SECTION("header longer than 100 MB is refused from a 16-byte file") {
    CHECK_THAT(error_for(with_length(100'000'001, "{}      ")),
               Catch::Contains("header length 100000001 exceeds the limit of 100000000 bytes"));
    CHECK_THAT(error_for(with_length(~0ull, "{}      ")), Catch::Contains("exceeds the limit"));
  }
  SECTION("a header of exactly 100 MB is not over the limit, but this file is too short for it") {
    CHECK_THAT(error_for(with_length(100'000'000, "{}      ")),
               Catch::Contains("needs at least 100000008 bytes but the file has only 16"));
  }
  SECTION("header length past the end of the file") {
    CHECK_THAT(error_for(with_length(100, "{}")), Catch::Contains("needs at least 108 bytes"));
  }
}

TEST_CASE("the header must be UTF-8 JSON object", "[safetensors][validation]") {
  for (const std::string bad :
       {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    const std::string header =
        R"({"w)" + bad + R"(":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    CHECK_THAT(error_for_header(header, 16),
               Catch::Contains("header is not valid UTF-8 (bad byte at header offset 3)"));
  }
  CHECK_THAT(error_for_header("{\"w\":", 0), Catch::Contains("header is not valid JSON"));
  CHECK_THAT(error_for_header("{} x", 0), Catch::Contains("header is not valid JSON"));
  CHECK_THAT(error_for_header("", 0), Catch::Contains("header is not valid JSON"));
  CHECK_THAT(error_for_header("[1, 2]", 0),
             Catch::Contains("header must be a JSON object, not a array"));
}

TEST_CASE("tensor entries have exactly dtype, shape and data_offsets",
          "[safetensors][validation]") {
  CHECK_THAT(error_for_header(R"({"w":3})", 0),
             Catch::Contains("tensor 'w' must be a JSON object {dtype, shape, data_offsets}"));
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"F32","shape":[2,2]}})", 16),
             Catch::Contains("tensor 'w' is missing field 'data_offsets'"));
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"F32","data_offsets":[0,16]}})", 16),
             Catch::Contains("tensor 'w' is missing field 'shape'"));
  CHECK_THAT(error_for_header(R"({"w":{"shape":[2,2],"data_offsets":[0,16]}})", 16),
             Catch::Contains("tensor 'w' is missing field 'dtype'"));
  CHECK_THAT(
      error_for_header(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16],"x":1}})", 16),
      Catch::Contains("tensor 'w' has unknown field 'x'"));
}

TEST_CASE("dtype must be a known dtype string", "[safetensors][validation]") {
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"F17","shape":[2],"data_offsets":[0,8]}})", 8),
             Catch::Contains("tensor 'w' has unknown dtype 'F17' (known: BOOL, U8"));
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}})", 8),
             Catch::Contains("unknown dtype 'f32'"));
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", 8),
             Catch::Contains("tensor 'w' has dtype 'C64', which shardkit does not support"));
  CHECK_THAT(error_for_header(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4),
             Catch::Contains("tensor 'w' has a dtype that is a int64, not a string"));
}

TEST_CASE("shape is an array of non-negative integers", "[safetensors][validation]") {
  for (const std::string dim : {"-1", "2.0", "1e1", "\"2\"", "null", "18446744073709551616"}) {
    const auto msg = error_for_header(
        R"({"w":{"dtype":"U8","shape":[)" + dim + R"(],"data_offsets":[0,2]}})", 2);
    CHECK_THAT(msg, Catch::Contains("tensor 'w' has shape entry") &&
                        Catch::Contains("not a non-negative integer"));
  }
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"U8","shape":2,"data_offsets":[0,2]}})", 2),
             Catch::Contains("tensor 'w' has a shape that is a int64, not an array"));
}

TEST_CASE("data_offsets is [begin, end] with begin <= end", "[safetensors][validation]") {
  for (const std::string offsets : {"[0]", "[0,4,8]", "[-1,4]", "[0,4.5]", "\"0-4\"", "{}"}) {
    const auto msg =
        error_for_header(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":)" + offsets + "}}", 4);
    CHECK_THAT(msg, Catch::Contains("tensor 'w' has data_offsets " + offsets.substr(0, 3)) &&
                        Catch::Contains("expected [begin, end], two non-negative integers"));
  }
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[8,4]}})", 8),
             Catch::Contains("tensor 'w' has data_offsets [8, 4] whose begin is after its end"));
}

TEST_CASE("__metadata__ is only a string-to-string map", "[safetensors][validation]") {
  CHECK_THAT(error_for_header(R"({"__metadata__":[1],)" + kW + "}", 16),
             Catch::Contains(
                 "__metadata__ must be a JSON object mapping strings to strings, not a array"));
  CHECK_THAT(
      error_for_header(R"({"__metadata__":{"a":"b","n":3},)" + kW + "}", 16),
      Catch::Contains("__metadata__ must map strings to strings, but key 'n' has a int64 value"));
  CHECK_THAT(error_for_header(
                 R"({"__metadata__":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 16),
             Catch::Contains("key 'shape' has a array value"));
}

TEST_CASE("tensors tile the data section from 0 without gap or overlap",
          "[safetensors][validation]") {
  SECTION("first tensor not at 0") {
    CHECK_THAT(
        error_for_header(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[4,20]}})", 20),
        Catch::Contains(
            "tensor 'w' has data_offsets [4, 20] but the first tensor must start at offset 0"));
  }
  SECTION("gap") {
    const auto msg = error_for_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                      12);
    CHECK_THAT(
        msg, Catch::Contains("tensor 'b' has data_offsets [8, 12] leaving a gap after tensor 'a', "
                             "which ends at 4"));
  }
  SECTION("overlap, whatever order the header lists them in") {
    const auto msg = error_for_header(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
                                      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                      12);
    CHECK_THAT(msg,
               Catch::Contains(
                   "tensor 'b' has data_offsets [4, 12] overlapping tensor 'a', which ends at 8"));
  }
}

TEST_CASE("each tensor's byte length matches its shape and dtype", "[safetensors][validation]") {
  CHECK(error_for_header(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12) ==
        "model.safetensors: tensor 'w' has data_offsets [0, 12] but shape [2, 2] of F32 needs 16 "
        "bytes");
  CHECK_THAT(error_for_header(R"({"w":{"dtype":"F32","shape":[],"data_offsets":[0,0]}})", 0),
             Catch::Contains("shape [] of F32 needs 4 bytes"));
  SECTION("overflow is caught, even with a zero dimension after it (as the reference does)") {
    CHECK_THAT(
        error_for_header(
            R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
        Catch::Contains("tensor 'w' has shape [4294967296, 4294967296] of F32 whose byte size "
                        "overflows 64 bits"));
    CHECK_THAT(
        error_for_header(
            R"({"w":{"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})", 0),
        Catch::Contains("overflows 64 bits"));
    CHECK_THAT(
        error_for_header(
            R"({"w":{"dtype":"U8","shape":[9223372036854775807,4],"data_offsets":[0,0]}})", 0),
        Catch::Contains("overflows 64 bits"));
  }
}

TEST_CASE("the last tensor ends exactly at the end of the file", "[safetensors][validation]") {
  CHECK_THAT(error_for_header("{" + kW + "}", 17),
             Catch::Contains(
                 "model.safetensors: tensors cover 16 bytes but the data section after the header "
                 "has 17 (trailing bytes after the last tensor)"));
  CHECK_THAT(error_for_header("{" + kW + "}", 15),
             Catch::Contains("has 15 (missing bytes: truncated file?)"));
  CHECK_THAT(error_for_header("{}", 1), Catch::Contains("trailing bytes"));
}

TEST_CASE("duplicate header keys: the last one wins, as in the reference",
          "[safetensors][validation]") {
  const auto file = st::File::from_bytes(
      image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            8),
      "dup");
  REQUIRE(file.names() == std::vector<std::string>{"a"});
  CHECK(file.get("a").shape == std::vector<int64_t>{2});
}

TEST_CASE("every truncation of a valid file is a FormatError, never a crash",
          "[safetensors][validation]") {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const std::int64_t scalar = 7;
  const std::vector<st::TensorRef> refs = {
      {"w", st::DType::F32, {2, 3}, w.data(), 24},
      {"s", st::DType::I64, {}, &scalar, 8},
      {"e", st::DType::BF16, {0, 5}, nullptr, 0},
  };
  const auto full = st::serialize(refs, {{"format", "pt"}});
  REQUIRE(error_for(full) == "");
  shardkit_test::TempDir dir;
  const std::string path = dir.file("cut.safetensors");
  for (std::size_t len = 0; len < full.size(); ++len) {
    std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    INFO("length " << len << " of " << full.size());
    CHECK_THAT(error_for(cut), Catch::StartsWith("model.safetensors: "));
    shardkit_test::write_bytes(path, cut);
    CHECK_THAT(format_error_of([&] { st::File::open(path); }), Catch::StartsWith(path + ": "));
  }
}

TEST_CASE("a corrupted byte anywhere gives a valid file or a FormatError",
          "[safetensors][validation]") {
  const std::vector<std::uint8_t> data(12, 0x3c);
  const auto full = st::serialize(
      {{"w", st::DType::F16, {2, 3}, data.data(), 12}, {"e", st::DType::U8, {0}, nullptr, 0}},
      {{"k", "v"}});
  std::size_t refused = 0;
  for (std::size_t pos = 0; pos < full.size(); ++pos) {
    for (std::uint8_t value : {0x00, 0xff, 0x22, 0x39, 0x7b, 0x5d, 0x2d}) {
      auto bytes = full;
      bytes[pos] = value;
      INFO("byte " << pos << " set to " << int(value));
      const auto msg = error_for(bytes);
      if (!msg.empty()) {
        CHECK_THAT(msg, Catch::StartsWith("model.safetensors: "));
        ++refused;
      }
    }
  }
  CHECK(refused > full.size());  // most corruptions must be caught, not read as garbage
}

TEST_CASE("open() reports files it cannot read", "[safetensors][validation]") {
  shardkit_test::TempDir dir;
  const std::string missing = dir.file("missing.safetensors");
  CHECK_THAT(format_error_of([&] { st::File::open(missing); }),
             Catch::Contains(missing + ": cannot open safetensors file: No such file"));
  CHECK_THAT(format_error_of([&] { st::File::open(dir.file("")); }),
             Catch::Contains("not a regular file"));
}
