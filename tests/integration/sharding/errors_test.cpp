// Sharded backends refuse what they cannot do at start, on every rank, naming the fix.
#include <filesystem>

#include "sharded_runs.hpp"

using namespace shardkit::test;
namespace fs = std::filesystem;

namespace {

/// 2 processes of the wrap_fixture policy under fsdp with `extra`.
ProcessResult fixture_run(const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--output_dir=" + out, "--plugin_path=" + std::string(SHARDKIT_FIXTURE_DIR) + "/policies",
                                   "--policy.type=wrap_fixture", "--steps=3", "--batch_size=2",
                                   "--distributed_backend=fsdp", "--checkpoint_format=dcp", "--num_threads=1",
                                   "--distributed.timeout_s=30"};
  args.insert(args.end(), extra.begin(), extra.end());
  return launch(2, args);
}

void require_refused(const ProcessResult& r, const std::string& dir, const std::string& message) {
  INFO(r.output);
  CHECK(r.exit_code == 2);  // a configuration error, on every rank, passed on by the launcher
  CHECK(contains(r.output, message));
  CHECK_FALSE(fs::exists(dir + "/metrics.jsonl"));
}

}  // namespace

TEST_CASE("a policy without wrap units is refused by fsdp, saying how to declare them") {
  TempDir dir("sk-shard-nowrap");
  const auto r = fixture_run(dir / "run", {"--policy.declare_wrap=false"});
  require_refused(r, dir / "run", "found no wrap units: the policy declares none in wrap_modules() and neither "
                                  "--accelerator.fsdp.wrap_modules='[\"Cls\"]' nor --accelerator.fsdp.min_num_params=N "
                                  "is set (the policy's blocks: FixtureBlock)");
  // Naming the class on the command line is the fix.
  const auto fixed = fixture_run(dir / "fixed", {"--policy.declare_wrap=false",
                                                 "--accelerator.fsdp.wrap_modules=[\"FixtureBlock\"]"});
  INFO(fixed.output);
  CHECK(fixed.exit_code == 0);
}

TEST_CASE("a wrap class that no block has is refused, naming the classes that exist") {
  TempDir dir("sk-shard-badcls");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                                  "--accelerator.fsdp.wrap_modules=[\"Nope\"]"}));
  require_refused(r, dir / "run", "--accelerator.fsdp.wrap_modules names 'Nope', but no block of the policy has that "
                                  "class; its blocks are: MlpBlock");
}

TEST_CASE("wrap_modules and min_num_params together are refused: both choose the wrap units") {
  TempDir dir("sk-shard-wrapboth");
  const auto r = launch(2, tiny_run(dir / "run", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                                  "--accelerator.fsdp.wrap_modules=MlpBlock",
                                                  "--accelerator.fsdp.min_num_params=100"}));
  require_refused(r, dir / "run", "--accelerator.fsdp.wrap_modules and --accelerator.fsdp.min_num_params both choose "
                                  "the wrap units, by class and by size: give one of them");
}

TEST_CASE("a weight tied across two wrap units is refused, naming the parameter") {
  TempDir dir("sk-shard-tied");
  const auto r = fixture_run(dir / "run", {"--policy.tie=across"});
  require_refused(r, dir / "run", "parameter 'blocks.0.weight' is tied to 'blocks.1.weight', but they sit in "
                                  "different wrap units (blocks.0 and blocks.1)");
}

TEST_CASE("dp_shard with ddp, a bad ignored_modules regex and a zero stage out of range are refused") {
  TempDir dir("sk-shard-bad");
  require_refused(launch(2, tiny_run(dir / "ddp", {"--steps=3", "--distributed_backend=ddp", "--parallelism.dp_shard=2"})),
                  dir / "ddp", "--distributed_backend=ddp replicates the whole model, but the mesh asks for "
                               "--parallelism.dp_shard=2");
  require_refused(launch(2, tiny_run(dir / "regex", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                                     "--accelerator.fsdp.ignored_modules=head["})),
                  dir / "regex", "--accelerator.fsdp.ignored_modules='head[' is not a valid regular expression");
  require_refused(launch(2, tiny_run(dir / "nomatch", {"--steps=3", "--distributed_backend=fsdp", "--checkpoint_format=dcp",
                                                       "--accelerator.fsdp.ignored_modules=^nothing$"})),
                  dir / "nomatch", "--accelerator.fsdp.ignored_modules='^nothing$' matches no module of the policy");
  require_refused(launch(2, tiny_run(dir / "stage", {"--steps=3", "--distributed_backend=zero", "--checkpoint_format=dcp",
                                                     "--accelerator.zero.stage=4"})),
                  dir / "stage", "--accelerator.zero.stage");
}
