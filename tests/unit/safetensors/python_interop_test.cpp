// Interoperability with the reference Python safetensors library (pip install safetensors numpy).
#include <sys/wait.h>

#include <cstdio>
#include <cstring>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#undef CHECK  // in case LibTorch brought glog's CHECK, which would shadow Catch's

#include <catch2/catch.hpp>

#include "safetensors_test_support.hpp"
#include "test_support.hpp"
#include "shardkit/safetensors.hpp"

namespace st = shardkit::safetensors;

namespace {

struct Expected {
  std::string name;
  st::DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

template <typename T>
void append(std::vector<std::uint8_t>* out, T value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out->insert(out->end(), p, p + sizeof(T));
}

// Element k of each dtype, as interop.py's values() and raw() define it.
std::vector<std::uint8_t> values(st::DType dtype, int count) {
  std::vector<std::uint8_t> out;
  for (int k = 0; k < count; ++k) {
    const double real = (k - 2) * 0.5;
    switch (dtype) {
      case st::DType::BOOL: append<std::uint8_t>(&out, k % 2); break;
      case st::DType::U8: append<std::uint8_t>(&out, static_cast<std::uint8_t>(k * 3)); break;
      case st::DType::U16: append<std::uint16_t>(&out, static_cast<std::uint16_t>(k * 3)); break;
      case st::DType::U32: append<std::uint32_t>(&out, static_cast<std::uint32_t>(k * 3)); break;
      case st::DType::U64: append<std::uint64_t>(&out, static_cast<std::uint64_t>(k * 3)); break;
      case st::DType::I8: append<std::int8_t>(&out, static_cast<std::int8_t>(k - 2)); break;
      case st::DType::I16: append<std::int16_t>(&out, static_cast<std::int16_t>(k - 2)); break;
      case st::DType::I32: append<std::int32_t>(&out, k - 2); break;
      case st::DType::I64: append<std::int64_t>(&out, k - 2); break;
      case st::DType::F16:
        append<std::uint16_t>(&out, c10::Half(static_cast<float>(real)).x);
        break;
      case st::DType::BF16:
        append<std::uint16_t>(&out, c10::BFloat16(static_cast<float>(real)).x);
        break;
      case st::DType::F32: append<float>(&out, static_cast<float>(real)); break;
      case st::DType::F64: append<double>(&out, real); break;
      case st::DType::F8_E5M2:
      case st::DType::F8_E4M3:
        append<std::uint8_t>(&out, static_cast<std::uint8_t>((k * 17 + 1) % 256));
        break;
    }
  }
  return out;
}

std::vector<Expected> expected_tensors() {
  std::vector<Expected> out;
  for (st::DType dtype : st::kAllDTypes) {
    out.push_back({std::string("t.") + st::dtype_name(dtype), dtype, {2, 3}, values(dtype, 6)});
  }
  out.push_back({"scalar", st::DType::F64, {}, values(st::DType::F64, 1)});
  out.push_back({"empty", st::DType::I32, {3, 0}, {}});
  return out;
}

// Runs `command`, returning its exit status and what it printed (stderr included).
int run(const std::string& command, std::string* output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

TEST_CASE("files round-trip with the reference Python safetensors library",
          "[safetensors][python]") {
  std::string probe;
  if (run(shardkit::test::python() + " -c 'import safetensors, numpy'", &probe) != 0) {
    FAIL(
        "the SDK venv's Python cannot import safetensors and numpy, which this test needs to "
        "compare with the reference implementation: run scripts/setup.sh.\n"
        << probe);
  }
  const std::vector<Expected> tensors = expected_tensors();
  std::vector<st::TensorRef> refs;
  for (const Expected& e : tensors)
    refs.push_back({e.name, e.dtype, e.shape, e.bytes.data(), e.bytes.size()});
  const std::map<std::string, std::string> metadata = {{"format", "pt"}};

  shardkit_test::TempDir dir;
  const std::string ours = dir.file("ours.safetensors"), theirs = dir.file("theirs.safetensors");
  st::write_file(ours, refs, metadata);

  const std::string script =
      std::string(SHARDKIT_SOURCE_DIR) + "/tests/unit/safetensors/interop.py";
  std::string output;
  const int status =
      run(shardkit::test::python() + " " + quoted(script) + " " + quoted(ours) + " " + quoted(theirs), &output);
  INFO(output);
  REQUIRE(status == 0);
  REQUIRE_THAT(output, Catch::StartsWith("OK"));

  const st::File file = st::File::open(theirs);
  CHECK(file.metadata() == metadata);
  CHECK(file.names().size() == tensors.size());
  for (const Expected& e : tensors) {
    INFO(e.name);
    REQUIRE(file.contains(e.name));
    const st::TensorView& view = file.get(e.name);
    CHECK(view.dtype == e.dtype);
    CHECK(view.shape == e.shape);
    CHECK(std::vector<std::uint8_t>(view.data, view.data + view.nbytes) == e.bytes);
  }
  // Same tensors, same metadata: the reference's bytes and ours must be identical.
  CHECK(shardkit_test::read_bytes(theirs) == shardkit_test::read_bytes(ours));
}
