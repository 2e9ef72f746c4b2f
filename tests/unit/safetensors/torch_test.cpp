// The LibTorch adapter: scalar type mapping, to_tensor and ref_of round trips.

// LibTorch pulls in glog, whose CHECK(cond) would replace Catch's CHECK and abort on
// failure: include it first and drop glog's macro before Catch defines its own.
#include <torch/torch.h>
#include <torch/version.h>
#undef CHECK

#include <catch2/catch.hpp>

#include <cstring>

#include "safetensors_test_support.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace st = shardkit::safetensors;
using shardkit_test::format_error_of;

namespace {

const std::vector<c10::ScalarType> kTorchTypes = {
    torch::kBool,     torch::kUInt8, torch::kInt8,    torch::kInt16,   torch::kFloat16,
    torch::kBFloat16, torch::kInt32, torch::kFloat32, torch::kFloat64, torch::kInt64};

torch::Tensor sample(c10::ScalarType type, at::IntArrayRef shape) {
  const int64_t n = c10::multiply_integers(shape);
  return (torch::arange(n, torch::kFloat64) * 1.5 - 3).remainder(7).to(type).reshape(shape);
}

}  // namespace

TEST_CASE("scalar types map both ways", "[safetensors][torch]") {
  for (c10::ScalarType type : kTorchTypes) {
    INFO(c10::toString(type));
    CHECK(st::scalar_type_of(st::dtype_of(type)) == type);
  }
  CHECK(st::dtype_of(torch::kBFloat16) == st::DType::BF16);
  CHECK(st::dtype_of(torch::kUInt8) == st::DType::U8);
  CHECK_THAT(format_error_of([] { st::dtype_of(torch::kComplexFloat); }),
             Catch::Contains("safetensors has no dtype for torch scalar type ComplexFloat"));
}

TEST_CASE("the dtypes LibTorch 1.13 lacked (U16/U32/U64, F8) now map both ways", "[safetensors][torch]") {
  for (st::DType dtype :
       {st::DType::U16, st::DType::U32, st::DType::U64, st::DType::F8_E5M2, st::DType::F8_E4M3}) {
    INFO(st::dtype_name(dtype));
    CHECK(st::dtype_of(st::scalar_type_of(dtype)) == dtype);
  }
  // A U16 view becomes a uint16 tensor with the same bytes.
  const std::vector<std::uint8_t> bytes{0x34, 0x12, 0xff, 0xff};
  const st::TensorView view{st::DType::U16, {2}, bytes.data(), bytes.size()};
  const auto tensor = st::to_tensor(view);
  REQUIRE(tensor.scalar_type() == torch::kUInt16);
  CHECK(std::memcmp(tensor.data_ptr(), bytes.data(), bytes.size()) == 0);
}

TEST_CASE("tensors round-trip through ref_of, a file and to_tensor", "[safetensors][torch]") {
  std::vector<torch::Tensor> keep;
  std::vector<st::TensorRef> refs;
  for (c10::ScalarType type : kTorchTypes) {
    const std::string name = c10::toString(type);
    keep.push_back(sample(type, {3, 4}));
    keep.push_back(sample(type, {}));
    keep.push_back(sample(type, {2, 0}));
    refs.push_back(st::ref_of(name + ".matrix", keep[keep.size() - 3]));
    refs.push_back(st::ref_of(name + ".scalar", keep[keep.size() - 2]));
    refs.push_back(st::ref_of(name + ".empty", keep[keep.size() - 1]));
  }
  shardkit_test::TempDir dir;
  const std::string path = dir.file("torch.safetensors");
  st::write_file(path, refs, {{"format", "pt"}});

  std::vector<torch::Tensor> loaded;
  {
    const st::File file = st::File::open(path);
    for (const st::TensorRef& ref : refs) loaded.push_back(st::to_tensor(file.get(ref.name)));
  }  // the copies must outlive the mapping
  for (std::size_t i = 0; i < keep.size(); ++i) {
    INFO(refs[i].name);
    CHECK(loaded[i].scalar_type() == keep[i].scalar_type());
    CHECK(loaded[i].sizes() == keep[i].sizes());
    CHECK(torch::equal(loaded[i], keep[i]));
  }
}

TEST_CASE("ref_of borrows the tensor's bytes and refuses what it cannot write",
          "[safetensors][torch]") {
  const torch::Tensor t = torch::arange(12, torch::kFloat32).reshape({3, 4});
  const st::TensorRef ref = st::ref_of("t", t);
  CHECK(ref.data == t.data_ptr());
  CHECK(ref.nbytes == 48);
  CHECK(ref.shape == std::vector<int64_t>{3, 4});
  CHECK(ref.dtype == st::DType::F32);

  // A contiguous slice starts mid-storage: the ref must point at its first element.
  const torch::Tensor row = t[1];
  CHECK(st::ref_of("row", row).data == static_cast<const float*>(t.data_ptr()) + 4);

  auto error = [](const torch::Tensor& tensor) {
    try {
      st::ref_of("bad", tensor);
    } catch (const shardkit::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error(t.t()),
             Catch::Contains("tensor 'bad' is not contiguous; pass tensor.contiguous()"));
  CHECK_THAT(error(torch::Tensor()), Catch::Contains("tensor 'bad' is undefined"));
  CHECK_THAT(error(t.to_sparse()), Catch::Contains("not strided"));
  CHECK_THAT(error(torch::zeros({2}, torch::kComplexFloat)), Catch::Contains("ComplexFloat"));
}
