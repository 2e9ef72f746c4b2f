// The `dcp` checkpoint format end to end: PyTorch reads it, resume at other world sizes, bad files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "../distributed/launch.hpp"
#include "shardkit/files.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// Two identical 2-rank runs of 20 steps, one saving safetensors and one dcp, at steps 10 and 20.
struct TwinRuns {
  TempDir dir{"sk-dcp"};
  std::string st = dir / "st", dcp = dir / "dcp";
  TwinRuns() {
    for (const auto& [out, format] : {std::pair{st, "safetensors"}, std::pair{dcp, "dcp"}}) {
      const auto r = launch(2, tiny_run(out, {"--steps=20", "--save_freq=10", "--batch_size=4",
                                              std::string("--checkpoint_format=") + format}));
      INFO(r.output);
      REQUIRE(r.exit_code == 0);
    }
  }
};

/// Resumes run folder `run` (rolled back to its checkpoint 000010) on `nproc` processes to step
/// 16; the losses of its metrics.jsonl. `expected` are parts of the run's output.
std::vector<std::string> resume(const std::string& run, int nproc, const std::vector<std::string>& extra = {},
                                const std::vector<std::string>& expected = {}) {
  std::vector<std::string> args = {"--resume=true", "--output_dir=" + run, "--steps=16"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = launch(nproc, args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "resumed from"));
  for (const auto& part : expected) CHECK(contains(r.output, part));
  std::vector<std::string> out;
  for (const auto& line : read_metrics(run)) out.push_back(line.raw.at("loss"));
  return out;
}

/// Resumes a copy of `run` holding only its checkpoint 000010, on `nproc` processes, to step 16.
std::vector<std::string> resume_copy(const std::string& run, const std::string& to, int nproc,
                                     const std::vector<std::string>& extra = {}) {
  roll_back_copy(run, to, "000010");
  return resume(to, nproc, extra);
}

/// The entry of `file` in checkpoint `dir`'s manifest.json as written ("<file>":{"size":..,"xxh3_64":".."}),
/// or "" when the manifest does not list it.
std::string manifest_entry(const std::string& dir, const std::string& file) {
  const auto text = slurp(dir + "/manifest.json");
  const auto at = text.find("\"" + file + "\":");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('}', at) + 1 - at);
}

/// shardkit-convert-dcp with `args` exits with `code`, its output holding each of `texts`.
void converter_says(const std::vector<std::string>& args, int code, const std::vector<std::string>& texts) {
  const auto r = run_program("shardkit-convert-dcp", args);
  INFO(r.output);
  CHECK(r.exit_code == code);
  for (const auto& text : texts) CHECK(contains(r.output, text));
}

}  // namespace

TEST_CASE("a 2-rank dcp checkpoint opens with PyTorch's dcp.load, equal to the safetensors one") {
  TwinRuns runs;
  const auto step = "/checkpoints/000020";
  CHECK(fs::is_regular_file(runs.dcp + step + "/pretrained_model/pytorch_model_fsdp_0/.metadata"));
  CHECK(fs::is_regular_file(runs.dcp + step + "/pretrained_model/pytorch_model_fsdp_0/__0_0.distcp"));
  CHECK(fs::is_regular_file(runs.dcp + step + "/training_state/optimizer_0/.metadata"));
  CHECK_FALSE(fs::exists(runs.dcp + step + "/pretrained_model/model.safetensors"));
  const auto r = run_command(python() + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                         "/tests/integration/checkpoint/dcp_compare.py") +
                             " " + shell_quote(runs.dcp + step) + " " + shell_quote(runs.st + step));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "OK "));

  // docs/checkpoints.md's first Python block, as printed there, on this checkpoint.
  auto docs = slurp(std::string(SHARDKIT_SOURCE_DIR) + "/docs/checkpoints.md");
  const auto heading = docs.find("### Opening a shardkit checkpoint in Python");
  REQUIRE(heading != std::string::npos);
  const auto begin = docs.find("```python\n", heading) + 10, end = docs.find("```", begin);
  auto snippet = docs.substr(begin, end - begin);
  const std::string example = "outputs/train/run/checkpoints/last";
  REQUIRE(snippet.find(example) != std::string::npos);
  snippet.replace(snippet.find(example), example.size(), runs.dcp + "/checkpoints/last");
  snippet += "from safetensors.torch import load_file\n"
             "w = load_file('" + runs.st + step + "/pretrained_model/model.safetensors')\n"
             "assert sorted(w) == sorted(state['model']), (sorted(w), sorted(state['model']))\n"
             "assert all(torch.equal(w[k], state['model'][k]) for k in w)\n"
             "print('SNIPPET OK', len(w))\n";
  const auto script = runs.dir / "snippet.py";
  shardkit::write_text_file(script, snippet);
  const auto s = run_command(python() + " " + shell_quote(script));
  INFO(snippet << s.output);
  CHECK(contains(s.output, "SNIPPET OK"));

  // shardkit-convert-dcp merges the shards into the very file the safetensors run wrote.
  const auto merged = runs.dir / "merged.safetensors";
  const auto c = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + runs.dcp + step, "--output=" + merged});
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  CHECK(contains(c.output, "converted "));
  CHECK(slurp(merged) == slurp(runs.st + step + "/pretrained_model/model.safetensors"));
  // In place, deleting the shards only after the written file was checked.
  const auto d = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + runs.dcp + step, "--delete_dcp=true"});
  INFO(d.output);
  REQUIRE(d.exit_code == 0);
  CHECK(slurp(runs.dcp + step + "/pretrained_model/model.safetensors") == slurp(merged));
  CHECK_FALSE(fs::exists(runs.dcp + step + "/pretrained_model/pytorch_model_fsdp_0"));
}

TEST_CASE("shardkit-convert-dcp refuses what it cannot do, saying how") {
  TempDir dir("sk-convert-bad");
  auto r = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + (dir / "nope")});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "does not exist; expected a DCP folder"));
  r = run_program("shardkit-convert-dcp", {"--dcp_dir=" + dir.path()});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "--dcp_dir needs --output="));
  r = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + dir.path(), "--push_to_hub=true"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "does not upload anywhere"));
  r = run_program("shardkit-convert-dcp", {"--dcp_dir=" + dir.path(), "--output=" + (dir / "x.safetensors")});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, ".metadata is missing"));
  r = run_program("shardkit-convert-dcp", {"--checkpoint_dir=" + dir.path(), "--delete_dcp=true",
                                           "--output=" + (dir / "x.safetensors")});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "would leave the checkpoint without its model"));
}

TEST_CASE("shardkit-convert-dcp reads its options as shardkit-train does") {
  TempDir dir("sk-convert-flags");
  // Dashes for underscores: each option reaches the check that follows it.
  converter_says({"--checkpoint-dir=" + (dir / "nope")}, 2,
                 {(dir / "nope") + "/pretrained_model/pytorch_model_fsdp_0 does not exist"});
  converter_says({"--dcp-dir", dir.path(), "--output", dir / "x.safetensors"}, 1, {".metadata is missing"});
  converter_says({"--dcp-dir=" + dir.path(), "--output=" + (dir / "x.safetensors"), "--delete-dcp=true"}, 2,
                 {"--delete_dcp works with --checkpoint_dir only"});
  // Unknown options and both spellings at once: named, as shardkit-train names them.
  converter_says({"--checkpoint-dir=" + dir.path(), "--delete-dcps=true"}, 2,
                 {"unknown option --delete_dcps", "did you mean --delete_dcp?"});
  converter_says({"--checkpoint-dir=" + dir.path(), "--checkpoint_dir=" + dir.path()}, 2,
                 {"are two spellings of the option --checkpoint_dir"});
  converter_says({"--checkpoint-dir=" + dir.path(), "--push-to-hub=true"}, 2,
                 {"--push-to-hub: shardkit-convert-dcp does not upload anywhere"});
  converter_says({"--help"}, 0, {"--delete_dcp=<bool>"});
}

TEST_CASE("a checkpoint converted with --delete_dcp=true resumes from its safetensors files as the safetensors run does") {
  TwinRuns runs;
  const auto both = runs.dir / "both";
  const auto r = launch(2, tiny_run(both, {"--steps=20", "--save_freq=10", "--batch_size=4",
                                           "--checkpoint_format=safetensors_dcp"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto reference = resume_copy(runs.st, runs.dir / "st-2", 2);
  REQUIRE(reference.size() == 16);
  const auto st_step = runs.st + "/checkpoints/000010";
  // dcp: DCP folders only; safetensors_dcp: model.safetensors (in its manifest) beside them.
  for (const auto& [run, format] : {std::pair{runs.dcp, "dcp"}, std::pair{both, "safetensors_dcp"}}) {
    INFO(format);
    const auto copy = runs.dir / (std::string("converted-") + format);
    roll_back_copy(run, copy, "000010");
    const auto step = copy + "/checkpoints/000010";
    const auto c = run_program("shardkit-convert-dcp", {"--checkpoint-dir=" + step, "--delete-dcp=true"});
    INFO(c.output);
    REQUIRE(c.exit_code == 0);
    CHECK(contains(c.output, "updated " + step + "/manifest.json"));
    CHECK_FALSE(fs::exists(step + "/pretrained_model/pytorch_model_fsdp_0"));
    CHECK_FALSE(fs::exists(step + "/training_state/optimizer_0"));
    // The files of the safetensors format, byte for byte, listed with the trainer's size and
    // checksum; the DCP files no longer listed; every other entry as the trainer wrote it.
    for (const std::string file : {"pretrained_model/model.safetensors", "training_state/optimizer_state.safetensors"}) {
      INFO(file);
      CHECK(slurp(step + "/" + file) == slurp(st_step + "/" + file));
      CHECK_FALSE(manifest_entry(step, file).empty());
      CHECK(manifest_entry(step, file) == manifest_entry(st_step, file));
    }
    const auto manifest = slurp(step + "/manifest.json");
    CHECK_FALSE(contains(manifest, "pytorch_model_fsdp_0"));
    CHECK_FALSE(contains(manifest, "optimizer_0"));
    const auto original = run + "/checkpoints/000010";
    for (const std::string file : {"pretrained_model/config.json", "training_state/training_step.json"})
      CHECK(manifest_entry(step, file) == manifest_entry(original, file));
    // Every file checked against the updated manifest's checksums; the format found from the files.
    const auto resumed = resume(copy, 2, {"--checkpoint.verify=true"},
                                {"checked every file of", "was saved in the 'safetensors' format"});
    REQUIRE(resumed.size() == 16);
    CHECK(resumed == reference);  // the same digits: the same weights and optimizer state loaded
  }
}

TEST_CASE("dcp resumes exactly as safetensors does, on the same and on other world sizes") {
  TwinRuns runs;
  for (const int nproc : {2, 1, 3}) {
    INFO(nproc << " processes");
    const auto tag = std::to_string(nproc);
    const auto from_st = resume_copy(runs.st, runs.dir / ("st-" + tag), nproc);
    const auto from_dcp = resume_copy(runs.dcp, runs.dir / ("dcp-" + tag), nproc);
    REQUIRE(from_dcp.size() == 16);
    CHECK(from_dcp == from_st);  // the same digits: the same weights and optimizer state loaded
  }
  // Same topology: also the uninterrupted run's own losses.
  const auto full = read_metrics(runs.dcp);
  const auto two = read_metrics(runs.dir / "dcp-2");
  for (std::size_t i = 10; i < 16; ++i) CHECK(two[i].raw.at("loss") == full[i].raw.at("loss"));
}

TEST_CASE("a single-process dcp checkpoint resumes on 2 processes as safetensors does") {
  TempDir dir("sk-dcp-one");
  std::map<std::string, std::vector<std::string>> resumed;
  for (const std::string format : {"safetensors", "dcp"}) {
    const auto out = dir / format;
    const auto r = run_program("shardkit-train", tiny_run(out, {"--steps=20", "--save_freq=10", "--batch_size=4",
                                                                "--checkpoint_format=" + format}));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    resumed[format] = resume_copy(out, dir / (format + "-2"), 2);
  }
  REQUIRE(resumed["dcp"].size() == 16);
  CHECK(resumed["dcp"] == resumed["safetensors"]);
}

TEST_CASE("the checkpoint format may change between save and resume: detected from the files") {
  TwinRuns runs;
  const auto reference = resume_copy(runs.st, runs.dir / "st-2", 2);
  // dcp -> safetensors: loaded as dcp (with a notice), later checkpoints written as safetensors.
  const auto dcp_to_st = resume_copy(runs.dcp, runs.dir / "to-st", 2, {"--checkpoint_format=safetensors"});
  CHECK(dcp_to_st == reference);
  CHECK(fs::is_regular_file(runs.dir / "to-st/checkpoints/000016/pretrained_model/model.safetensors"));
  // safetensors -> dcp.
  const auto st_to_dcp = resume_copy(runs.st, runs.dir / "to-dcp", 2, {"--checkpoint_format=dcp"});
  CHECK(st_to_dcp == reference);
  CHECK(fs::is_regular_file(runs.dir / "to-dcp/checkpoints/000016/pretrained_model/pytorch_model_fsdp_0/.metadata"));
}

TEST_CASE("safetensors_dcp writes both artefacts and resumes from the DCP shards") {
  TwinRuns runs;
  const auto both = runs.dir / "both";
  const auto r = launch(2, tiny_run(both, {"--steps=20", "--save_freq=10", "--batch_size=4",
                                           "--checkpoint_format=safetensors_dcp"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto step = "/checkpoints/000020";
  CHECK(slurp(both + step + "/pretrained_model/model.safetensors") ==
        slurp(runs.st + step + "/pretrained_model/model.safetensors"));
  CHECK(fs::is_regular_file(both + step + "/pretrained_model/pytorch_model_fsdp_0/.metadata"));
  CHECK(fs::is_regular_file(both + step + "/training_state/optimizer_0/.metadata"));
  CHECK_FALSE(fs::exists(both + step + "/training_state/optimizer_state.safetensors"));
  CHECK(resume_copy(both, runs.dir / "both-3", 3) == resume_copy(runs.st, runs.dir / "st-3", 3));
}

TEST_CASE("a rank killed between its data file and .metadata leaves last at a checkpoint that resumes") {
  TwinRuns runs;
  const auto out = runs.dir / "killed";
  // Calls 1-2 save checkpoint 10 (model, optimizer); on call 3 (checkpoint 20's model
  // folder) rank 1 dies after writing its data file, before rank 0 could write .metadata.
  const auto r = run_command("SHARDKIT_TEST_DCP_KILL=1:3 " +
                             launch_command(2, tiny_run(out, {"--steps=20", "--save_freq=10", "--batch_size=4",
                                                              "--checkpoint_format=dcp"})));
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "rank 1"));
  CHECK(fs::read_symlink(out + "/checkpoints/last") == "000010");
  CHECK_FALSE(fs::exists(out + "/checkpoints/000020"));
  const auto resumed = launch(2, {"--resume=true", "--output_dir=" + out});
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(contains(resumed.output, "at step 10"));
  const auto a = read_metrics(out), b = read_metrics(runs.dcp);
  REQUIRE(a.size() == 20);
  for (std::size_t i = 10; i < 20; ++i) CHECK(a[i].raw.at("loss") == b[i].raw.at("loss"));
}

TEST_CASE("a damaged dcp checkpoint is refused naming the file and entry") {
  TwinRuns runs;
  const auto copy = runs.dir / "damaged";
  fs::copy(runs.dcp, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  // Without its manifest (as another tool writes a checkpoint), so that the dcp reader's own
  // checks are what finds the damage; tests/integration/crash covers the manifest's.
  fs::remove(copy + "/checkpoints/000020/manifest.json");
  const auto data = copy + "/checkpoints/000020/pretrained_model/pytorch_model_fsdp_0/__0_0.distcp";
  fs::resize_file(data, fs::file_size(data) / 2);
  auto r = launch(1, {"--resume=true", "--output_dir=" + copy, "--steps=30"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "__0_0.distcp (item of 'model."));
  CHECK(contains(r.output, "outside the file"));

  const auto meta = copy + "/checkpoints/000020/pretrained_model/pytorch_model_fsdp_0/.metadata";
  // A pickle that names os.system (protocol 2, GLOBAL opcode): refused, never called.
  std::ofstream(meta, std::ios::binary) << "\x80\x02" "cos\nsystem\n" "(S'echo pwned'\ntR.";
  r = launch(1, {"--resume=true", "--output_dir=" + copy, "--steps=30"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "os.system"));

  // A rank's data file gone: named, with what is wrong.
  const auto other = runs.dir / "no-rank-file";
  fs::copy(runs.dcp, other, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove(other + "/checkpoints/000020/pretrained_model/pytorch_model_fsdp_0/__0_0.distcp");
  r = launch(1, {"--resume=true", "--output_dir=" + other, "--steps=30"});
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(contains(r.output, "__0_0.distcp is missing or unreadable"));
}

TEST_CASE("a DCP checkpoint PyTorch wrote from 2 sharded ranks loads with --policy.path") {
  TempDir dir("sk-torch-dcp");
  const auto st = dir / "st";
  auto r = launch(2, tiny_run(st, {"--steps=10", "--save_freq=10", "--batch_size=4"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto pretrained = st + "/checkpoints/000010/pretrained_model";
  // PyTorch writes the same weights as FSDP2 shards (dim 0 split over 2 ranks).
  const auto theirs = dir / "theirs/pretrained_model";
  fs::create_directories(theirs);
  fs::copy_file(pretrained + "/config.json", theirs + "/config.json");
  r = run_command(python() + " -m torch.distributed.run --standalone --nproc-per-node=2 " +
                  shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/checkpoint/torch_dcp_save.py") +
                  " " + shell_quote(pretrained + "/model.safetensors") + " " + shell_quote(theirs));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::is_regular_file(theirs + "/pytorch_model_fsdp_0/__1_0.distcp"));
  // Converted offline, their shards give back the file they were made from, byte for byte.
  const auto c = run_program("shardkit-convert-dcp", {"--dcp_dir=" + theirs + "/pytorch_model_fsdp_0",
                                                      "--output=" + (dir / "theirs.safetensors")});
  INFO(c.output);
  REQUIRE(c.exit_code == 0);
  CHECK(slurp(dir / "theirs.safetensors") == slurp(pretrained + "/model.safetensors"));
  // Fine-tuning from their folder and from ours gives the same numbers.
  const auto from_ours = dir / "from-ours", from_theirs = dir / "from-theirs";
  r = run_program("shardkit-train", tiny_run(from_ours, {"--steps=5", "--batch_size=4", "--policy.path=" + pretrained}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  r = run_program("shardkit-train", tiny_run(from_theirs, {"--steps=5", "--batch_size=4", "--policy.path=" + theirs,
                                                           "--checkpoint_format=dcp"}));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto a = read_metrics(from_ours), b = read_metrics(from_theirs);
  REQUIRE(a.size() == 5);
  REQUIRE(b.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i].raw.at("loss") == a[i].raw.at("loss"));
}
