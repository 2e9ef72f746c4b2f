// ema_state.pt through LibTorch's pickler and zip writer; ema_state.json.
#include "ema_state_file.hpp"

#include <ATen/core/Dict.h>
#include <ATen/core/ivalue.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "shardkit/config.hpp"
#include "shardkit/error.hpp"
#include "shardkit/files.hpp"

namespace shardkit::train {
namespace {

/// torch.save's bytes for `value`. Not torch::pickle_save: its pickler tags every dict and list
/// with torch.jit._pickle.restore_type_tag (and writes a tensor list through build_tensorlist),
/// globals that torch.load(weights_only=True), PyTorch's default since 2.6, refuses.
std::string torch_save_bytes(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler([&](const char* bytes, size_t n) { pickled.insert(pickled.end(), bytes, bytes + n); },
                              nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::string out;
  caffe2::serialize::PyTorchStreamWriter writer([&out](const void* bytes, size_t n) -> size_t {
    out.append(static_cast<const char*>(bytes), n);
    return n;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return out;
}

std::string number(double value) { return to_string(Value{value}); }

}  // namespace

std::string ema_state_pt(const EmaOptions& o, std::int64_t optimization_step,
                         const std::vector<at::Tensor>& shadow_params) {
  c10::impl::GenericDict state(c10::StringType::get(), c10::AnyType::get());
  state.insert("decay", o.highest());
  state.insert("min_decay", o.lowest());  // a float: load_state_dict refuses an int here
  state.insert("optimization_step", optimization_step);
  state.insert("update_after_step", o.update_after_step);
  state.insert("use_ema_warmup", true);
  state.insert("inv_gamma", o.inv_gamma);
  state.insert("power", o.power);
  c10::impl::GenericList shadow(c10::AnyType::get());  // List[Any]: a plain list, not build_tensorlist
  for (const auto& tensor : shadow_params) shadow.push_back(tensor);
  state.insert("shadow_params", shadow);
  return torch_save_bytes(state);
}

std::string ema_state_json(const EmaOptions& o, std::int64_t optimization_step) {
  return "{\n  \"decay\": " + number(o.highest()) + ",\n  \"min_decay\": " + number(o.lowest()) +
         ",\n  \"optimization_step\": " + std::to_string(optimization_step) +
         ",\n  \"update_after_step\": " + std::to_string(o.update_after_step) +
         ",\n  \"use_ema_warmup\": true,\n  \"inv_gamma\": " + number(o.inv_gamma) + ",\n  \"power\": " +
         number(o.power) + "\n}\n";
}

std::int64_t read_ema_optimization_step(const std::string& path) {
  boost::json::error_code ec;
  const auto value = boost::json::parse(read_text_file(path), ec);
  const auto* step = !ec && value.is_object() ? value.as_object().if_contains("optimization_step") : nullptr;
  if (step == nullptr || !step->is_int64() || step->as_int64() < 0)
    throw FormatError(path + ": no optimization_step (a count of updates, >= 0); the checkpoint is damaged");
  return step->as_int64();
}

}  // namespace shardkit::train
