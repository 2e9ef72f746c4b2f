// --ema.enable (LeRobot main's EMA of the policy weights): the shadow follows diffusers' EMAModel,
// the same under every backend, continues exactly on resume in every format and at another
// topology, loads with --policy.path, and LeRobot's refusals.
#include <torch/torch.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <shardkit/safetensors.hpp>
#include <shardkit/safetensors_torch.hpp>

#include "../distributed/weights.hpp"
#include "../sharding/sharded_runs.hpp"  // kShardedRelTol, launch_ok, single_ok

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// The tensors of a safetensors file as saved (dtype kept, for exact comparisons).
std::map<std::string, at::Tensor> tensors_of(const std::string& path) {
  namespace st = shardkit::safetensors;
  const auto file = st::File::open(path);
  std::map<std::string, at::Tensor> out;
  for (const auto& name : file.names()) out[name] = st::to_tensor(file.get(name)).clone();
  return out;
}

/// The mlp policy of tiny_run() (2 blocks): its parameters() order, ema_state.pt's order.
std::vector<std::string> mlp_parameter_order() {
  std::vector<std::string> names{"input_proj.weight", "input_proj.bias"};
  for (const auto* block : {"blocks.0.", "blocks.1."})
    for (const auto* part : {"norm.weight", "norm.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"})
      names.push_back(std::string(block) + part);
  names.insert(names.end(), {"head.weight", "head.bias"});
  return names;
}

/// training_state/ema_state.pt of `checkpoint`, read with LibTorch.
struct EmaState {
  std::int64_t optimization_step = -1;
  std::vector<at::Tensor> shadow;
};

EmaState ema_state(const std::string& checkpoint) {
  const auto bytes = slurp(checkpoint + "/training_state/ema_state.pt");
  REQUIRE_FALSE(bytes.empty());
  const auto value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  REQUIRE(value.isGenericDict());
  const auto dict = value.toGenericDict();
  EmaState state;
  state.optimization_step = dict.at("optimization_step").toInt();
  for (const auto& t : dict.at("shadow_params").toListRef()) state.shadow.push_back(t.toTensor());
  return state;
}

/// ema_state.pt's shadow is pretrained_model_ema's weights, in the policy's parameter order.
void require_pt_matches_folder(const std::string& checkpoint) {
  const auto folder = tensors_of(checkpoint + "/pretrained_model_ema/model.safetensors");
  const auto state = ema_state(checkpoint);
  const auto order = mlp_parameter_order();
  REQUIRE(state.shadow.size() == order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    INFO(order[i]);
    CHECK(torch::equal(state.shadow[i], folder.at(order[i])));
  }
}

/// What read_ema_state.py (torch.load(weights_only=True), diffusers' EMAModel) says of `checkpoint`.
std::map<std::string, std::string> diffusers_view(const std::string& checkpoint) {
  const auto script = std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/everyday/read_ema_state.py";
  const auto r = run_command(python() + " " + shell_quote(script) + " " +
                             shell_quote(checkpoint + "/training_state/ema_state.pt"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);  // also without diffusers: never a silent pass
  std::map<std::string, std::string> out;
  std::istringstream in(r.output);
  int shadows = 0;
  for (std::string line; std::getline(in, line);) {
    const auto space = line.find(' ');
    const auto key = line.substr(0, space);
    if (key == "shadow") ++shadows;
    else out[key] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  out["shadows"] = std::to_string(shadows);
  return out;
}

const std::vector<std::string> kEma = {"--ema.enable=true", "--ema.power=0.75"};

}  // namespace

TEST_CASE("--ema.enable: the shadow follows diffusers' EMAModel update by update") {
  TempDir dir("sk-ema");
  single_ok(dir / "run", with(kEma, {"--steps=3", "--save_freq=1", "--ema.update_after_step=1"}), {});
  const auto at = [&](int step, const char* folder) {
    return tensors_of(dir / ("run/checkpoints/00000" + std::to_string(step)) + "/" + folder + "/model.safetensors");
  };
  // Updates 1 and 2 (t = update - update_after_step - 1 <= 0): decay 0, the shadow takes the weights.
  for (int step : {1, 2}) {
    const auto shadow = at(step, "pretrained_model_ema"), weights = at(step, "pretrained_model");
    for (const auto& [name, w] : weights) {
      INFO("step " << step << ", " << name);
      CHECK(torch::allclose(shadow.at(name), w, 1e-6, 1e-6));
    }
  }
  // Update 3: t = 1, decay 1 - (1 + 1)^-0.75, and diffusers' in-place form, on the same CPU kernels.
  const double decay = 1.0 - std::pow(2.0, -0.75);
  const auto s2 = at(2, "pretrained_model_ema"), s3 = at(3, "pretrained_model_ema"), w3 = at(3, "pretrained_model");
  for (const auto& [name, w] : w3) {
    INFO(name);
    CHECK(torch::equal(s3.at(name), s2.at(name) - (s2.at(name) - w) * (1.0 - decay)));
  }
  // The shadow is not the weights once it averages.
  CHECK_FALSE(torch::allclose(s3.at("head.weight"), w3.at("head.weight"), 1e-4, 1e-6));

  // The same files as pretrained_model/ beside the weights.
  for (const auto& e : fs::directory_iterator(dir / "run/checkpoints/000003/pretrained_model")) {
    INFO(e.path().filename());
    CHECK(fs::exists(fs::path(dir / "run/checkpoints/000003/pretrained_model_ema") / e.path().filename()));
  }
  require_pt_matches_folder(dir / "run/checkpoints/000003");
  const auto seen = diffusers_view(dir / "run/checkpoints/000003");
  CHECK(seen.at("decay") == "float 0.9999");
  CHECK(seen.at("min_decay") == "float 0.0");
  CHECK(seen.at("optimization_step") == "int 3");
  CHECK(seen.at("update_after_step") == "int 1");
  CHECK(seen.at("use_ema_warmup") == "bool True");
  CHECK(seen.at("inv_gamma") == "float 1.0");
  CHECK(seen.at("power") == "float 0.75");
  CHECK(seen.at("shadows") == std::to_string(mlp_parameter_order().size()));
  CHECK(std::stod(seen.at("next_decay")) == 1.0 - std::pow(3.0, -0.75));  // update 4: t = 2
  CHECK(seen.count("diffusers"));
}

TEST_CASE("one process, ddp, fsdp and zero stage 3 at 2 ranks average the same weights") {
  TempDir dir("sk-ema-backends");
  const auto common = with(kEma, {"--steps=8", "--save_freq=8"});
  single_ok(dir / "single", common, {"--batch_size=8"});
  launch_ok(2, dir / "ddp", common, {"--batch_size=4"});
  launch_ok(2, dir / "fsdp", common, {"--batch_size=4", "--distributed_backend=fsdp"});
  launch_ok(2, dir / "zero3", common,
            {"--batch_size=4", "--distributed_backend=zero", "--accelerator.zero.stage=3"});
  for (const auto* run : {"ddp", "fsdp", "zero3"}) {
    INFO(run);
    const auto d = weight_difference(dir / run, dir / "single", "pretrained_model_ema");
    INFO("worst relative EMA weight difference " << d);
    CHECK(d <= kShardedRelTol);
    // ema_state.pt gathered from the shards is the folder's weights, and loads in diffusers.
    require_pt_matches_folder(dir / run + "/checkpoints/last");
    CHECK(diffusers_view(dir / run + "/checkpoints/last").at("optimization_step") == "int 8");
  }
}

TEST_CASE("a resumed run continues the shadow exactly, in every checkpoint format") {
  TempDir dir("sk-ema-resume");
  for (const std::string format : {"safetensors", "dcp", "safetensors_dcp"}) {
    INFO("format " << format);
    const auto full = dir / ("full_" + format), resumed = dir / ("resumed_" + format);
    single_ok(full, with(kEma, {"--steps=8", "--save_freq=4", "--checkpoint_format=" + format}), {});
    roll_back_copy(full, resumed, "000004");
    const auto r = run_program("shardkit-train", {"--resume=true", "--output_dir=" + resumed});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const auto a = ema_state(full + "/checkpoints/000008"), b = ema_state(resumed + "/checkpoints/000008");
    CHECK(b.optimization_step == 8);
    CHECK(a.optimization_step == 8);
    REQUIRE(a.shadow.size() == b.shadow.size());
    for (std::size_t i = 0; i < a.shadow.size(); ++i) CHECK(torch::equal(a.shadow[i], b.shadow[i]));
    if (format == "dcp") {
      CHECK(fs::exists(resumed + "/checkpoints/000008/pretrained_model_ema/pytorch_model_fsdp_0/.metadata"));
      // shardkit-convert-dcp makes pretrained_model_ema/model.safetensors of the shadow's shards.
      const auto converted = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + resumed + "/checkpoints/000008",
                                                                  "--delete_dcp=true"});
      INFO(converted.output);
      REQUIRE(converted.exit_code == 0);
      CHECK_FALSE(fs::exists(resumed + "/checkpoints/000008/pretrained_model_ema/pytorch_model_fsdp_0"));
      require_pt_matches_folder(resumed + "/checkpoints/000008");
    } else {
      const auto x = tensors_of(full + "/checkpoints/000008/pretrained_model_ema/model.safetensors");
      const auto y = tensors_of(resumed + "/checkpoints/000008/pretrained_model_ema/model.safetensors");
      REQUIRE(x.size() == y.size());
      for (const auto& [name, t] : x) CHECK(torch::equal(t, y.at(name)));
    }
  }
}

TEST_CASE("a shadow saved sharded by fsdp at 2 resumes in one process") {
  TempDir dir("sk-ema-reshard");
  const auto common = with(kEma, {"--steps=8", "--save_freq=4", "--checkpoint_format=safetensors_dcp"});
  launch_ok(2, dir / "fsdp", common, {"--batch_size=4", "--distributed_backend=fsdp"});
  roll_back_copy(dir / "fsdp", dir / "one", "000004");
  // The same global batch (8) in one process: the same samples, so the same run within tolerance.
  const auto r = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (dir / "one"), "--batch_size=8",
                                                "--distributed_backend=single"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto d = weight_difference(dir / "one", dir / "fsdp", "pretrained_model_ema");
  INFO("worst relative EMA weight difference " << d);
  CHECK(d <= kShardedRelTol);
  CHECK(ema_state(dir / "one/checkpoints/last").optimization_step == 8);
}

TEST_CASE("resuming a checkpoint without a shadow restarts it from the checkpoint's weights, with a warning") {
  TempDir dir("sk-ema-late");
  single_ok(dir / "run", {"--steps=4", "--save_freq=4"}, {});
  const auto r = run_program("shardkit-train", {"--resume=true", "--output_dir=" + (dir / "run"), "--steps=8",
                                                "--ema.enable=true"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "Resuming with --ema.enable=true but " + (dir / "run/checkpoints/")));
  CHECK(contains(r.output, "/training_state/ema_state.json is missing; restarting the shadow from the current weights."));
  CHECK(ema_state(dir / "run/checkpoints/000008").optimization_step == 4);  // counted from the restart
}

TEST_CASE("--policy.path=<checkpoint>/pretrained_model_ema starts from the averaged weights") {
  TempDir dir("sk-ema-path");
  single_ok(dir / "a", with(kEma, {"--steps=4", "--save_freq=4"}), {});
  // lr 0: the one update changes nothing, so the checkpoint holds the weights the run started from.
  single_ok(dir / "b", {"--policy.path=" + (dir / "a/checkpoints/last/pretrained_model_ema"), "--steps=1",
                        "--save_freq=1", "--optimizer.lr=0"}, {});
  const auto want = tensors_of(dir / "a/checkpoints/last/pretrained_model_ema/model.safetensors");
  const auto got = tensors_of(dir / "b/checkpoints/last/pretrained_model/model.safetensors");
  REQUIRE(got.size() == want.size());
  for (const auto& [name, t] : want) {
    INFO(name);
    CHECK(torch::equal(got.at(name), t));
  }
  // ... and not the live weights of pretrained_model/.
  const auto live = tensors_of(dir / "a/checkpoints/last/pretrained_model/model.safetensors");
  CHECK_FALSE(torch::equal(got.at("head.weight"), live.at("head.weight")));
}

TEST_CASE("--dry_run shows the shadow sharded as the parameters: 1/N per rank under fsdp") {
  // "...: <size> per rank (<bytes> bytes; the whole trainable weights: <bytes> bytes)"
  const auto shadow_bytes = [](const std::vector<std::string>& flags) {
    TempDir dir("sk-ema-dry");
    const auto r = run_program("shardkit-train", tiny_run(dir / "run", with({"--ema.enable=true", "--dry_run=true"}, flags)));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string mark = "adds the EMA shadow of the weights the optimizer steps: ";
    const auto at = r.output.find(mark);
    REQUIRE(at != std::string::npos);
    const auto open = r.output.find('(', at), middle = r.output.find("weights: ", open + 1);
    REQUIRE(open != std::string::npos);
    REQUIRE(middle != std::string::npos);
    return std::make_pair(std::stoll(r.output.substr(open + 1)), std::stoll(r.output.substr(middle + 9)));
  };
  const auto [single, single_whole] = shadow_bytes({"--distributed_backend=single"});
  CHECK(single == single_whole);
  const auto [fsdp, fsdp_whole] = shadow_bytes({"--distributed_backend=fsdp", "--parallelism.dp_shard=4"});
  CHECK(fsdp_whole == single_whole);
  CHECK(fsdp * 4 >= fsdp_whole);  // dim-0 shards, padded to equal sizes
  CHECK(fsdp * 3 < fsdp_whole);
}

TEST_CASE("--ema.* values LeRobot refuses are configuration errors in its words") {
  TempDir dir("sk-ema-bad");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ema.min_decay=0.5", "--ema.max_decay=0.4"},
       "Expected 0 <= ema.min_decay <= ema.max_decay <= 1, got min_decay=0.5 and max_decay=0.4."},
      {{"--ema.inv_gamma=0"}, "ema.inv_gamma must be positive, got 0.0."},
      {{"--ema.power=-1"}, "ema.power must be positive, got -1.0."},
      {{"--ema.update_after_step=-1"}, "ema.update_after_step must be >= 0, got -1."},
      {{"--ema.decay=1.5"}, "ema.decay must be in [0, 1], got 1.5."},
      {{"--ema.decay=0.99", "--ema.max_decay=0.999"},
       "ema.decay (constant decay) and ema.min_decay/ema.max_decay (schedule clamp) are mutually exclusive: set "
       "one or the other."},
  };
  int n = 0;
  for (const auto& [flags, message] : cases) {
    INFO(message);
    const auto out = dir / ("run" + std::to_string(n++));
    const auto r = run_program("shardkit-train", tiny_run(out, with({"--ema.enable=true", "--steps=2"}, flags)));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.output, message));
    CHECK_FALSE(fs::exists(out));  // refused before the run folder was made
  }
}
