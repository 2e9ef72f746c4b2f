// shardkit-convert-dcp: a DCP model folder (shardkit's or PyTorch's) to one model.safetensors, offline.
#include <filesystem>
#include <iostream>
#include <string>

#include "convert.hpp"
#include "shardkit/dcp/folder.hpp"
#include "shardkit/error.hpp"
#include "shardkit/peft.hpp"

namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: shardkit-convert-dcp --checkpoint_dir=<run>/checkpoints/<step> [--output=FILE] [--delete_dcp=true]\n"
    "       shardkit-convert-dcp --dcp_dir=<DCP folder> --output=FILE\n"
    "Merges a DCP model folder (pretrained_model/pytorch_model_fsdp_0, written by shardkit or by\n"
    "PyTorch's dcp.save from any number of ranks) into one model.safetensors, one tensor in\n"
    "memory at a time, on one process. --checkpoint_dir writes <dir>/pretrained_model/model.safetensors\n"
    "(a PEFT run's checkpoint, with adapter_config.json: adapter_model.safetensors under PEFT's names)\n"
    "unless --output is given; --delete_dcp=true removes the DCP folder after the written file\n"
    "was read back and checked.\n";

struct Options {
  std::string checkpoint_dir, dcp_dir, output;
  std::string name_prefix;  // "base_model.model." for a PEFT adapter
  bool delete_dcp = false;
};

bool parse_bool(const std::string& flag, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw shardkit::ConfigError(flag + "=" + value + ": expected true or false");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const auto flag = arg.substr(0, eq);
    const auto value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (flag == "--checkpoint_dir") {
      o.checkpoint_dir = value;
    } else if (flag == "--dcp_dir") {
      o.dcp_dir = value;
    } else if (flag == "--output") {
      o.output = value;
    } else if (flag == "--delete_dcp") {
      o.delete_dcp = parse_bool(flag, value);
    } else if (flag == "--push_to_hub" || flag == "--repo_id") {
      throw shardkit::ConfigError(flag + ": shardkit-convert-dcp does not upload anywhere; convert "
                                  "here, then upload the folder with your hub's own tool");
    } else {
      throw shardkit::ConfigError("unknown flag '" + arg + "'");
    }
  }
  if (o.checkpoint_dir.empty() == o.dcp_dir.empty())
    throw shardkit::ConfigError("give exactly one of --checkpoint_dir and --dcp_dir");
  if (!o.dcp_dir.empty() && o.output.empty())
    throw shardkit::ConfigError("--dcp_dir needs --output=<file>.safetensors");
  if (!o.checkpoint_dir.empty()) {
    o.dcp_dir = (fs::path(o.checkpoint_dir) / shardkit::dcp::kModelFolder).string();
    // A PEFT run's checkpoint holds only the adapter: it becomes PEFT's adapter file.
    const bool adapter = fs::exists(fs::path(o.checkpoint_dir) / "pretrained_model/adapter_config.json");
    if (adapter) o.name_prefix = shardkit::kPeftKeyPrefix;
    if (o.output.empty())
      o.output = (fs::path(o.checkpoint_dir) /
                  (adapter ? "pretrained_model/adapter_model.safetensors" : "pretrained_model/model.safetensors"))
                     .string();
  }
  if (o.delete_dcp && o.checkpoint_dir.empty())
    throw shardkit::ConfigError("--delete_dcp works with --checkpoint_dir only");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto options = parse(argc, argv);
    if (!fs::is_directory(options.dcp_dir))
      throw shardkit::ConfigError(options.dcp_dir + " does not exist; expected a DCP folder "
                                  "(.metadata and __<rank>_0.distcp files)");
    std::size_t shown = 0;
    const auto done = shardkit::convert::convert_folder(
        options.dcp_dir, options.output, [&](std::size_t n, std::size_t total) {
          // About 20 progress lines whatever the size.
          if (n == total || n * 20 / total > shown) {
            shown = n * 20 / total;
            std::cout << "converted " << n << "/" << total << " tensors" << std::endl;
          }
        },
        options.name_prefix);
    std::cout << "wrote " << options.output << ": " << done.tensors << " tensors, " << done.bytes
              << " bytes" << (done.byte_items ? " (" + std::to_string(done.byte_items) +
                                                    " non-tensor entries left out)"
                                              : std::string())
              << std::endl;
    if (options.delete_dcp) {
      fs::remove_all(options.dcp_dir);
      std::cout << "removed " << options.dcp_dir << std::endl;
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
