// --nproc-per-node=auto|cpu|gpu: how many workers this node's CPUs or visible GPUs call for.
#pragma once

#include <string>

namespace shardkit::run {

/// A worker count derived from the machine, and what it was derived from ("2 CPUs").
struct DerivedCount {
  int count = 0;
  std::string source;
};

/// torchrun's meanings of a non-numeric --nproc-per-node: `cpu` = one worker per online CPU
/// core, `gpu` = one per visible CUDA device (an error when there is none), `auto` = `gpu`
/// when a CUDA device is visible, else `cpu`. Throws shardkit::ConfigError for any other
/// word and for `gpu` without a device.
DerivedCount count_from_machine(const std::string& value);

}  // namespace shardkit::run
