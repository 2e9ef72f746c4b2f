// shardkit-convert-dcp: a DCP model folder (shardkit's or PyTorch's) to one model.safetensors, offline.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint.hpp"
#include "convert.hpp"
#include "shardkit/config.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/dcp/folder.hpp"
#include "shardkit/error.hpp"

namespace {
namespace fs = std::filesystem;

constexpr const char* kProgram = "shardkit-convert-dcp";

constexpr const char* kUsage =
    "usage: shardkit-convert-dcp --checkpoint_dir=<run>/checkpoints/<step> [--output=FILE] [--delete_dcp=true]\n"
    "       shardkit-convert-dcp --dcp_dir=<DCP folder> --output=FILE\n"
    "Merges a DCP model folder (pretrained_model/pytorch_model_fsdp_0, written by shardkit or by\n"
    "PyTorch's dcp.save from any number of ranks) into one model.safetensors, one tensor in\n"
    "memory at a time, on one process. --checkpoint_dir writes <dir>/pretrained_model/model.safetensors\n"
    "(a PEFT run's checkpoint, with adapter_config.json: adapter_model.safetensors under PEFT's names)\n"
    "and lists it in the checkpoint's manifest.json, unless --output is given; --delete_dcp=true\n"
    "also converts the optimizer state (training_state/optimizer_0) to optimizer_state.safetensors\n"
    "and removes both DCP folders once the written files were read back and checked, leaving a\n"
    "checkpoint of the safetensors format that resumes. Options are written as for shardkit-train\n"
    "(--checkpoint-dir is --checkpoint_dir; --key value also works).\n";

const shardkit::OptionSpec kOptions[] = {
    {"checkpoint_dir", shardkit::OptionType::String, "",
     "a checkpoint folder, <run>/checkpoints/<step>: converts its pretrained_model/pytorch_model_fsdp_0", nullptr,
     nullptr, nullptr},
    {"dcp_dir", shardkit::OptionType::String, "", "any DCP folder (needs --output)", nullptr, nullptr, nullptr},
    {"output", shardkit::OptionType::String, "",
     "the safetensors file to write; with --checkpoint_dir the default is inside the checkpoint", nullptr, nullptr,
     nullptr},
    {"delete_dcp", shardkit::OptionType::Bool, "false",
     "with --checkpoint_dir: also convert the optimizer state, then remove the DCP folders", nullptr, nullptr,
     nullptr},
    {"help", shardkit::OptionType::Bool, "false", "this text", nullptr, nullptr, nullptr},
};

shardkit::Schema schema() {
  shardkit::Schema s;
  s.add("", kOptions, std::size(kOptions), kProgram);
  return s;
}

struct Options {
  std::string checkpoint_dir, dcp_dir, output;
  std::string name_prefix;  // "base_model.model." for a PEFT adapter
  bool delete_dcp = false;
  bool in_place = false;  // into checkpoint_dir, keeping its manifest true
};

[[noreturn]] void print_help() {
  std::cout << kUsage << "\n" << schema().help_text();
  std::exit(0);
}

// Read as shardkit-train reads its flags: the same parser, both spellings of each name, and an
// unknown option named with the closest known ones.
Options parse(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "-h") != args.end()) print_help();
  const auto flags = shardkit::canonical_spellings(shardkit::parse_flags(args));
  if (flags.count("help")) print_help();
  for (const char* key : {"push_to_hub", "repo_id"})
    if (const auto it = flags.find(key); it != flags.end())
      throw shardkit::ConfigError(it->second.origin + ": shardkit-convert-dcp does not upload anywhere; convert "
                                  "here, then upload the folder with your hub's own tool");
  const auto config = shardkit::resolve(schema(), {}, flags);
  Options o;
  o.checkpoint_dir = config.get_string("checkpoint_dir");
  o.dcp_dir = config.get_string("dcp_dir");
  o.output = config.get_string("output");
  o.delete_dcp = config.get_bool("delete_dcp");
  if (o.checkpoint_dir.empty() == o.dcp_dir.empty())
    throw shardkit::ConfigError("give exactly one of --checkpoint_dir and --dcp_dir");
  if (!o.dcp_dir.empty() && o.output.empty())
    throw shardkit::ConfigError("--dcp_dir needs --output=<file>.safetensors");
  if (o.delete_dcp && o.checkpoint_dir.empty())
    throw shardkit::ConfigError("--delete_dcp works with --checkpoint_dir only");
  if (!o.checkpoint_dir.empty()) {
    o.dcp_dir = (fs::path(o.checkpoint_dir) / shardkit::dcp::kModelFolder).string();
    const auto model = shardkit::convert::model_target(o.checkpoint_dir);
    o.name_prefix = model.name_prefix;
    const auto own = fs::path(o.checkpoint_dir) / model.file;
    o.in_place = o.output.empty() || fs::weakly_canonical(o.output) == fs::weakly_canonical(own);
    if (o.output.empty()) o.output = own.string();
  }
  if (o.delete_dcp && !o.in_place)
    throw shardkit::ConfigError("--delete_dcp with --output=" + o.output +
                                " would leave the checkpoint without its model; leave --output out, so that "
                                "the model is written into the checkpoint");
  return o;
}

/// About 20 "converted n/total tensors" lines per file, whatever its size.
shardkit::convert::Progress progress_lines() {
  return [shown = std::size_t{0}](std::size_t n, std::size_t total) mutable {
    if (n == total || n * 20 / total > shown) {
      shown = n * 20 / total;
      std::cout << "converted " << n << "/" << total << " tensors" << std::endl;
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto options = parse(argc, argv);
    if (!fs::is_directory(options.dcp_dir))
      throw shardkit::ConfigError(options.dcp_dir + " does not exist; expected a DCP folder "
                                  "(.metadata and __<rank>_0.distcp files)");
    if (options.in_place) {
      shardkit::convert::convert_checkpoint(options.checkpoint_dir, options.delete_dcp, progress_lines,
                                            [](const std::string& line) { std::cout << line << std::endl; });
    } else {
      const auto done =
          shardkit::convert::convert_folder(options.dcp_dir, options.output, progress_lines(), options.name_prefix);
      std::cout << shardkit::convert::summary(options.output, done) << std::endl;
    }
    return 0;
  } catch (const shardkit::ConfigError& e) {
    std::cerr << "shardkit-convert-dcp: " << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "shardkit-convert-dcp: error: " << e.what() << std::endl;
    return 1;
  }
}
