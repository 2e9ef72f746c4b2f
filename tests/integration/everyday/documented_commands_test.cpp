// Every shardkit-train command line that README.md and docs/ show runs as printed, at a tiny size on the tests' data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../distributed/launch.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

const std::string kSource = SHARDKIT_SOURCE_DIR;
/// Every LeRobot dataset the docs name becomes the one shipped with the tests (format v3.0, one camera).
const std::string kTinyDataset = kSource + "/tests/data/lerobot-tiny-v3/video";
constexpr int kTinySteps = 2;
/// A line asking for more processes than this on one machine is skipped (too heavy for a test).
constexpr int kMaxProcesses = 4;
/// ACT at scripts/run-main-job.sh's reduced size: its defaults are LeRobot's full model.
const std::vector<std::string> kSmallAct = {"--policy.dim_model=64",         "--policy.n_heads=4",
                                             "--policy.dim_feedforward=256",  "--policy.n_encoder_layers=2",
                                             "--policy.n_vae_encoder_layers=2", "--policy.chunk_size=10",
                                             "--policy.n_action_steps=10"};
/// Folders a page names as an earlier training's result without a command of its own making them: the run of
/// the page's previous command stands in (docs/policies/act.md fine-tunes the ACT base its first command trains).
const std::vector<std::string> kEarlierRunOfPage = {"outputs/train/my_base_policy"};
/// Flags whose value is a folder (or a file in one) of an earlier run.
const std::vector<std::string> kRunPathFlags = {"--policy.path", "--config_path", "--peft.adapter_path",
                                                "--output_dir"};

/// A command line of a shell block that starts shardkit-train.
struct DocCommand {
  std::string where;                  ///< page:line of its first line
  std::vector<std::string> launcher;  ///< the words before shardkit-train (empty: started directly)
  std::vector<std::string> flags;     ///< the words after it
  std::vector<std::string> shown;     ///< the comment lines right after it (what a dry run prints)
};

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") + 1 - begin);
}

std::string name_of(const std::string& flag) { return flag.substr(0, flag.find('=')); }

std::string value_of(const std::string& flag) {
  const auto eq = flag.find('=');
  return eq == std::string::npos ? "" : flag.substr(eq + 1);
}

bool has(const std::vector<std::string>& args, const std::string& name) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return name_of(a) == name; });
}

/// The value of flag `name` ("" when absent; the last one wins, as in shardkit-train).
std::string get(const std::vector<std::string>& args, const std::string& name) {
  std::string value;
  for (const auto& a : args)
    if (name_of(a) == name) value = value_of(a);
  return value;
}

/// Sets flag `name` to `value` where it is given, else adds it.
void set(std::vector<std::string>& args, const std::string& name, const std::string& value) {
  bool found = false;
  for (auto& a : args) {
    if (name_of(a) != name) continue;
    a = name + "=" + value;
    found = true;
  }
  if (!found) args.push_back(name + "=" + value);
}

/// `text` as a count, or -1 when it is not one (absent, or a placeholder such as $SLURM_NNODES).
int count(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(text);
}

bool under(const std::string& path, const std::string& folder) {
  return path.starts_with(folder) && (path.size() == folder.size() || path[folder.size()] == '/');
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

/// README.md, then docs/*.md and docs/policies/*.md in name order (README's runs come first: later pages may use them).
std::vector<std::string> doc_pages() {
  std::vector<std::string> pages = {"README.md"};
  for (const std::string folder : {"docs", "docs/policies"}) {
    std::vector<std::string> in_folder;
    for (const auto& e : fs::directory_iterator(kSource + "/" + folder))
      if (e.path().extension() == ".md") in_folder.push_back(folder + "/" + e.path().filename().string());
    std::sort(in_folder.begin(), in_folder.end());
    pages.insert(pages.end(), in_folder.begin(), in_folder.end());
  }
  return pages;
}

/// The shardkit-train command lines of `page`'s shell blocks (```bash, ```sh, ```shell or a bare ```):
/// continued lines joined, comments dropped, words split on blanks (no documented flag is quoted).
std::vector<DocCommand> commands_of(const std::string& page) {
  std::istringstream in(slurp(kSource + "/" + page));
  std::vector<DocCommand> out;
  bool in_block = false, shell = false;
  std::string pending;  // a command continued with a backslash
  int line_no = 0, first_line = 0;
  int previous = -1;  // the command of the line before, which a comment right after may show the output of
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto text = trimmed(line);
    if (text.starts_with("```")) {
      if (!in_block) {
        const auto info = trimmed(text.substr(3));
        shell = info.empty() || info == "bash" || info == "sh" || info == "shell";
      }
      in_block = !in_block;
      pending.clear();
      previous = -1;
      continue;
    }
    if (!in_block || !shell) continue;
    if (text.starts_with("#")) {
      if (previous >= 0 && pending.empty()) out[previous].shown.push_back(trimmed(text.substr(1)));
      continue;
    }
    const auto code = trimmed(text.substr(0, text.find(" #")));
    if (pending.empty()) first_line = line_no;
    if (code.ends_with("\\")) {
      pending += code.substr(0, code.size() - 1) + " ";
      continue;
    }
    std::istringstream words_in(pending + code);
    pending.clear();
    previous = -1;
    std::vector<std::string> words;
    for (std::string w; words_in >> w;) words.push_back(w);
    const auto train = std::find_if(words.begin(), words.end(),
                                    [](const std::string& w) { return w.ends_with("shardkit-train"); });
    if (train == words.end()) continue;
    out.push_back({page + ":" + std::to_string(first_line), std::vector<std::string>(words.begin(), train),
                   std::vector<std::string>(train + 1, words.end()), {}});
    previous = static_cast<int>(out.size()) - 1;
  }
  return out;
}

/// The runs made so far, for the commands that continue one.
struct Runs {
  std::map<std::string, std::string> folder_of;     ///< a documented --output_dir -> the folder it became here
  std::map<std::string, std::string> last_of_page;  ///< page -> the folder of its latest training run
};

/// `value` with an earlier run's documented folder at its start replaced by the folder that run used here.
std::string local_path(const std::string& value, const Runs& runs, const std::string& page) {
  for (const auto& [documented, here] : runs.folder_of)
    if (under(value, documented)) return here + value.substr(documented.size());
  const auto last = runs.last_of_page.find(page);
  for (const auto& documented : kEarlierRunOfPage)
    if (under(value, documented) && last != runs.last_of_page.end()) return last->second + value.substr(documented.size());
  return value;
}

/// How a documented command runs here.
struct Plan {
  std::string skip;               ///< why it cannot run here; empty when it runs
  int processes = 1;              ///< 1: shardkit-train itself, else through shardkit-run on loopback
  std::vector<std::string> args;  ///< shardkit-train's flags: local folders, tiny sizes
  bool trains = true;             ///< false for --help, --dry_run and --print_config
  std::string run_dir;            ///< the run folder it trains in
  int steps = kTinySteps;         ///< the step it ends at (its last checkpoint)
};

/// Sets `plan.processes` from the launcher words (shardkit-run, torchrun or accelerate launch, which
/// shardkit-run stands in for, its own flags aside); returns why the line cannot run here ("" when it can).
std::string read_launcher(const std::vector<std::string>& launcher, Plan& plan) {
  if (launcher.empty()) return "";
  const auto program = fs::path(launcher[0]).filename().string();
  const bool accelerate = program == "accelerate" && launcher.size() > 1 && launcher[1] == "launch";
  if (program != "shardkit-run" && program != "torchrun" && !accelerate)
    return "started through `" + launcher[0] + "`, which this test does not stand in for";
  for (const auto& w : launcher) {
    const auto name = name_of(w);
    if ((name == "--nnodes" || name == "--num_machines") && value_of(w) != "1") return "spans machines (" + w + ")";
    if (name == "--nproc-per-node" || name == "--nproc_per_node" || name == "--num_processes") {
      plan.processes = count(value_of(w));
      if (plan.processes < 1) return "`" + w + "` is not a process count";
    }
  }
  if (plan.processes > kMaxProcesses)
    return std::to_string(plan.processes) + " processes, more than this test starts (" +
           std::to_string(kMaxProcesses) + ")";
  return "";
}

/// The documented command made local and tiny, or why it cannot run here. Records the run folder it will make.
Plan plan_of(const DocCommand& c, const TempDir& dir, Runs& runs) {
  Plan plan;
  const auto page = c.where.substr(0, c.where.find(':'));
  for (const auto& w : c.launcher)
    if (w.starts_with("SHARDKIT_PLUGIN_PATH=")) plan.skip = "loads plugins built outside this tree (" + w + ")";
  for (const auto& w : c.flags)
    if (name_of(w) == "--plugins" || name_of(w) == "--plugin_path")
      plan.skip = "loads plugins built outside this tree (" + w + ")";
  if (!plan.skip.empty()) return plan;
  plan.skip = read_launcher(c.launcher, plan);
  if (!plan.skip.empty()) return plan;

  // A resume names its run (--output_dir or --config_path); any other --output_dir becomes a fresh folder.
  const bool resume = get(c.flags, "--resume") == "true";
  std::string documented_output_dir;
  for (const auto& w : c.flags) {
    if (w.starts_with("[") && w.ends_with("]")) continue;  // an optional flag, e.g. [--dataset.root=<folder>]
    const auto name = name_of(w);
    if (name == "--output_dir" && !resume) documented_output_dir = value_of(w);
    else if (std::find(kRunPathFlags.begin(), kRunPathFlags.end(), name) != kRunPathFlags.end())
      plan.args.push_back(name + "=" + local_path(value_of(w), runs, page));
    else plan.args.push_back(w);
  }
  if (get(plan.args, "--dataset.type") == "lerobot" || has(plan.args, "--dataset.repo_id") ||
      has(plan.args, "--dataset.root")) {
    set(plan.args, "--dataset.repo_id", "lerobot-tiny/video");
    set(plan.args, "--dataset.root", kTinyDataset);
  }

  auto remaining = plan.args;
  if (!documented_output_dir.empty()) remaining.push_back("--output_dir=" + documented_output_dir);
  for (const auto& w : remaining) {
    for (const auto* mark : {"...", "<", ">", "$", "/models/", "/shared/"}) {
      if (!contains(w, mark)) continue;
      plan.skip = "`" + w + "` is a placeholder or names what is not here";
      return plan;
    }
  }
  for (const auto& name : kRunPathFlags) {
    if (!has(plan.args, name) || under(get(plan.args, name), dir.path())) continue;
    plan.skip = "`" + name + "=" + get(plan.args, name) + "` is no earlier documented command's run";
    return plan;
  }

  plan.trains = !has(plan.args, "--help") && get(plan.args, "--dry_run") != "true" &&
                get(plan.args, "--print_config") != "true";
  if (has(plan.args, "--config_path")) {
    const auto config = get(plan.args, "--config_path");
    plan.run_dir = config.substr(0, config.find("/checkpoints/"));
  } else if (resume) {
    plan.run_dir = get(plan.args, "--output_dir");
  } else {
    auto folder = c.where;
    std::replace(folder.begin(), folder.end(), '/', '-');
    std::replace(folder.begin(), folder.end(), ':', '-');
    plan.run_dir = dir / folder;
    set(plan.args, "--output_dir", plan.run_dir);  // also for --help and dry runs: nothing lands in the test's folder
  }
  if (!plan.trains) return plan;
  if (!documented_output_dir.empty()) runs.folder_of[documented_output_dir] = plan.run_dir;
  runs.last_of_page[page] = plan.run_dir;

  const auto accumulation = std::max(1, count(get(plan.args, "--accelerator.gradient_accumulation.steps")));
  plan.steps = kTinySteps * accumulation * (resume ? 2 : 1);  // a resume trains further
  set(plan.args, "--steps", std::to_string(plan.steps));
  set(plan.args, "--save_freq", std::to_string(kTinySteps * accumulation));
  set(plan.args, "--batch_size", "2");
  set(plan.args, "--log_freq", "1");
  set(plan.args, "--num_threads", "1");
  std::erase_if(plan.args, [](const std::string& a) { return name_of(a) == "--epochs"; });
  if (get(plan.args, "--policy.type") == "act")
    for (const auto& flag : kSmallAct) set(plan.args, name_of(flag), value_of(flag));
  if (plan.processes > 1) set(plan.args, "--distributed.timeout_s", "60");  // a hang fails in a minute
  return plan;
}

/// Checkpoint folders are named by step, zero-padded to 6 digits (docs/checkpoints.md).
std::string checkpoint_name(int step) {
  const auto digits = std::to_string(step);
  return std::string(digits.size() < 6 ? 6 - digits.size() : 0, '0') + digits;
}

/// What the run of `c` must have done: exit 0 and, when it trains, a metrics line and a checkpoint at its last step.
void check_run(const DocCommand& c, const Plan& plan, const ProcessResult& r) {
  CHECK(r.exit_code == 0);
  if (r.exit_code != 0) return;
  if (has(plan.args, "--help")) {
    CHECK(contains(r.output, "usage: shardkit-train"));
    if (has(plan.args, "--policy.type"))  // "... plus the policy's own options"
      CHECK(contains(r.output, "policy '" + get(plan.args, "--policy.type") + "' options:"));
  }
  if (get(plan.args, "--dry_run") == "true")
    for (const auto& line : c.shown) CHECK(contains(r.output, line));  // the plan the page prints below it
  if (!plan.trains || get(plan.args, "--save_checkpoint") == "false") return;
  const auto metrics = read_metrics(plan.run_dir);
  CHECK_FALSE(metrics.empty());
  if (!metrics.empty()) CHECK(metrics.back().step == plan.steps);
  CHECK(fs::is_directory(plan.run_dir + "/checkpoints/" + checkpoint_name(plan.steps)));
  CHECK(fs::exists(plan.run_dir + "/checkpoints/last"));
}

}  // namespace

TEST_CASE("every shardkit-train command line of README.md and docs/ runs, at a tiny size, in the order shown") {
  TempDir dir("sk-documented-commands");
  Runs runs;
  int found = 0, ran = 0;
  std::string skipped;
  for (const auto& page : doc_pages()) {
    for (const auto& c : commands_of(page)) {
      ++found;
      const auto plan = plan_of(c, dir, runs);
      if (!plan.skip.empty()) {
        skipped += "\n  " + c.where + ": " + plan.skip;
        continue;
      }
      INFO(c.where << " runs as: "
                   << (plan.processes > 1 ? launch_command(plan.processes, plan.args)
                                          : "shardkit-train " + joined(plan.args)));
      const auto r = plan.processes > 1 ? launch(plan.processes, plan.args) : run_program("shardkit-train", plan.args);
      INFO(r.output);
      check_run(c, plan, r);
      ++ran;
    }
  }
  WARN(ran << " of " << found << " documented shardkit-train command lines ran; skipped:" << skipped);
  // The docs held 37 such lines when this test was written, 20 of which run here (README's
  // sequence, DDP, FSDP, HSDP, ZeRO, the launchers, a dry run, LeRobot datasets, ACT with LoRA):
  // fewer means the extraction broke or a runnable line turned into a skipped one.
  CHECK(ran >= 20);
}
