// Config provenance: the layer each resolved value came from, as --print_config and checkpoints record it.
#include <torch/types.h>  // before Catch, so that CHECK is Catch's (c10 defines one too)

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "../../../apps/shardkit-train/src/config_provenance.hpp"
#include "shardkit/config.hpp"
#include "shardkit/config_resolution.hpp"
#include "shardkit/mesh.hpp"
#include "shardkit/runtime.hpp"

using shardkit::Config;
using shardkit::MeshShape;
using shardkit::Runtime;
using shardkit::train::Provenance;
using shardkit::train::Selection;

namespace {

/// A value from each layer: a config file, a flag, and one left at its default.
Config three_layer_config() {
  Config config;
  config.set("optimizer.lr", 0.5);
  config.set("policy.type", std::string("mlp"));
  config.set("steps", std::int64_t{100});
  return config;
}

/// Every trainer option at its default, with the values record_resolved_values reads as a run
/// that gave none of them has them.
Config defaults_before_resolution() {
  shardkit::Schema schema;
  schema.add("", shardkit::train::core_options().data(), shardkit::train::core_options().size(), "core");
  auto config = shardkit::resolve_all(schema, {}, {}).config;
  config.set("parallelism.dp_replicate", std::int64_t{1});
  config.set("parallelism.dp_shard", std::int64_t{1});
  config.set("distributed_backend", std::string("auto"));
  config.set("distributed.comm", std::string("auto"));
  config.set("policy.device", std::string("cpu"));
  config.set("job_name", std::string("given"));
  config.set("output_dir", std::string("outputs/run"));
  return config;
}

/// resolve_all()'s origins for three_layer_config(): policy.type was not given.
std::map<std::string, std::string> flag_and_file_origins() {
  return {{"steps", "--steps"}, {"optimizer.lr", "run.toml:3:7"}};
}

/// A JSON string value as a std::string (for comparisons Catch can print).
std::string text_of(const boost::json::value& value) { return std::string(value.as_string()); }

Selection selection_of(const std::string& backend, const std::string& comm) {
  Selection selection;
  selection.policy = "mlp";
  selection.dataset = "synthetic";
  selection.backend = backend;
  selection.comm = comm;
  return selection;
}

Runtime launched(int world_size, const std::string& launcher, int local_rank) {
  Runtime runtime;
  runtime.world_size = world_size;
  runtime.local_world_size = world_size;
  runtime.rank = local_rank;
  runtime.local_rank = local_rank;
  runtime.launcher = launcher;
  return runtime;
}

}  // namespace

TEST_CASE("provenance names the kind of each origin", "[train][provenance]") {
  CHECK(Provenance::kind_of("") == "default");
  CHECK(Provenance::kind_of("default") == "default");
  CHECK(Provenance::kind_of("--steps") == "command line");
  CHECK(Provenance::kind_of("run.toml:3:7") == "config file");
  CHECK(Provenance::saved("train_config.json:3:7") == "saved config train_config.json:3:7");
  CHECK(Provenance::kind_of(Provenance::saved("train_config.json:3:7")) == "saved config");
  CHECK(Provenance::environment("WORLD_SIZE=2") == "environment WORLD_SIZE=2");
  CHECK(Provenance::kind_of(Provenance::environment("WORLD_SIZE=2")) == "environment");
}

TEST_CASE("provenance keeps each key's origin; a note adds to it and set replaces it", "[train][provenance]") {
  Provenance provenance(flag_and_file_origins());
  REQUIRE(provenance.find("steps") != nullptr);
  CHECK(provenance.find("steps")->origin == "--steps");
  CHECK(provenance.find("steps")->note.empty());
  REQUIRE(provenance.find("optimizer.lr") != nullptr);
  CHECK(provenance.find("optimizer.lr")->origin == "run.toml:3:7");
  CHECK(provenance.find("batch_size") == nullptr);

  provenance.add_note("steps", "first");
  provenance.add_note("steps", "second");
  CHECK(provenance.find("steps")->origin == "--steps");
  CHECK(provenance.find("steps")->note == "first; second");

  provenance.add_note("batch_size", "unrecorded");  // a note on a value nobody gave: its default
  REQUIRE(provenance.find("batch_size") != nullptr);
  CHECK(provenance.find("batch_size")->origin == "default");
  CHECK(provenance.find("batch_size")->note == "unrecorded");

  provenance.set("steps", Provenance::saved("train_config.json:9:3"));
  CHECK(provenance.find("steps")->origin == "saved config train_config.json:9:3");
  CHECK(provenance.find("steps")->note.empty());
}

TEST_CASE("provenance text writes one aligned line per value with its source", "[train][provenance]") {
  Provenance provenance(flag_and_file_origins());
  provenance.add_note("steps", "x");
  CHECK(provenance.text(three_layer_config()) ==
        "optimizer.lr = 0.5    # config file run.toml:3:7\n"
        "policy.type  = \"mlp\"  # default\n"
        "steps        = 100    # command line --steps; x\n");
}

TEST_CASE("provenance json records value, kind and origin of every key", "[train][provenance]") {
  Provenance provenance(flag_and_file_origins());
  provenance.add_note("steps", "a \"quoted\" note");
  const auto text = provenance.json(three_layer_config());
  const auto parsed = boost::json::parse(text);
  REQUIRE(parsed.is_object());
  const auto& o = parsed.as_object();
  CHECK(o.size() == 3u);

  const auto& lr = o.at("optimizer.lr").as_object();
  CHECK(lr.at("value").to_number<double>() == 0.5);
  CHECK(text_of(lr.at("source")) == "config file");
  CHECK(text_of(lr.at("from")) == "run.toml:3:7");
  CHECK_FALSE(lr.contains("note"));

  const auto& type = o.at("policy.type").as_object();
  CHECK(text_of(type.at("value")) == "mlp");
  CHECK(text_of(type.at("source")) == "default");
  CHECK(text_of(type.at("from")) == "default");

  const auto& steps = o.at("steps").as_object();
  CHECK(steps.at("value").to_number<std::int64_t>() == 100);
  CHECK(text_of(steps.at("source")) == "command line");
  CHECK(text_of(steps.at("from")) == "--steps");
  REQUIRE(steps.contains("note"));
  CHECK(text_of(steps.at("note")) == "a \"quoted\" note");

  CHECK(Provenance().json(Config()) == "{}\n");
}

TEST_CASE("a default mesh degree resolved from the launcher's world size is credited to the environment",
          "[train][provenance]") {
  auto config = defaults_before_resolution();
  config.set("job_name", std::string(""));
  config.set("output_dir", std::string(""));
  config.set("policy.device", std::string("cuda"));
  Provenance provenance;
  shardkit::train::record_resolved_values(config, provenance, launched(2, "torchrun", 1), selection_of("ddp", "nccl"),
                                          MeshShape{2, 1}, false);

  CHECK(config.get_int("parallelism.dp_replicate") == 2);
  CHECK(config.get_int("parallelism.dp_shard") == 1);
  const auto* replicate = provenance.find("parallelism.dp_replicate");
  REQUIRE(replicate != nullptr);
  CHECK(replicate->origin == "environment WORLD_SIZE=2");
  CHECK(replicate->note == "the default 1 resolved for 2 processes");
  CHECK(provenance.find("parallelism.dp_shard") == nullptr);  // unchanged: nothing to explain

  const auto* backend = provenance.find("distributed_backend");
  REQUIRE(backend != nullptr);
  CHECK(backend->origin == "default");
  CHECK(backend->note == "resolves to ddp for WORLD_SIZE=2 in the environment");
  const auto* comm = provenance.find("distributed.comm");
  REQUIRE(comm != nullptr);
  CHECK(comm->note == "resolves to nccl for --policy.device=cuda");
  const auto* device = provenance.find("policy.device");
  REQUIRE(device != nullptr);
  CHECK(device->note == "means cuda:1 in this process (its local rank, from the environment)");

  CHECK(config.get_string("job_name") == "mlp");
  REQUIRE(provenance.find("job_name") != nullptr);
  CHECK(provenance.find("job_name")->note == "empty means the policy type");
  REQUIRE(provenance.find("output_dir") != nullptr);
  CHECK(provenance.find("output_dir")->note ==
        "empty means outputs/train/<date>/<time>_<job_name>, named when the run starts");
}

TEST_CASE("a mesh degree given as a flag keeps its origin and gains a note on what it resolved to",
          "[train][provenance]") {
  auto config = defaults_before_resolution();
  config.set("parallelism.dp_shard", std::int64_t{-1});
  config.set("distributed_backend", std::string("fsdp"));
  config.set("distributed.comm", std::string("gloo"));
  const std::map<std::string, std::string> origins{{"parallelism.dp_shard", "--parallelism.dp_shard"}};
  Provenance provenance(origins);
  shardkit::train::record_resolved_values(config, provenance, launched(2, "slurm", 0), selection_of("fsdp", "gloo"),
                                          MeshShape{1, 2}, false);

  CHECK(config.get_int("parallelism.dp_shard") == 2);
  const auto* shard = provenance.find("parallelism.dp_shard");
  REQUIRE(shard != nullptr);
  CHECK(shard->origin == "--parallelism.dp_shard");
  CHECK(shard->note == "-1 resolved to 2 for SLURM_NTASKS=2 in the environment");
  // What was given as it is used needs no explanation.
  CHECK(provenance.find("parallelism.dp_replicate") == nullptr);
  CHECK(provenance.find("distributed_backend") == nullptr);
  CHECK(provenance.find("distributed.comm") == nullptr);
  CHECK(provenance.find("policy.device") == nullptr);
  CHECK(provenance.find("job_name") == nullptr);
  CHECK(config.get_string("job_name") == "given");
}

TEST_CASE("in one process and in a dry run, provenance says what the world was", "[train][provenance]") {
  SECTION("one process") {
    auto config = defaults_before_resolution();
    Provenance provenance;
    shardkit::train::record_resolved_values(config, provenance, Runtime{}, selection_of("single", "gloo"),
                                            MeshShape{1, 1}, false);
    const auto* backend = provenance.find("distributed_backend");
    REQUIRE(backend != nullptr);
    CHECK(backend->note == "resolves to single for one process (no launcher variables in the environment)");
    CHECK(provenance.find("distributed.comm") == nullptr);  // no transport in one process
    CHECK(provenance.find("parallelism.dp_shard") == nullptr);
  }
  SECTION("a dry run") {
    auto config = defaults_before_resolution();
    config.set("distributed_backend", std::string("fsdp"));
    Provenance provenance;
    shardkit::train::record_resolved_values(config, provenance, Runtime{}, selection_of("fsdp", "gloo"),
                                            MeshShape{1, 4}, true);
    CHECK(config.get_int("parallelism.dp_shard") == 4);
    const auto* shard = provenance.find("parallelism.dp_shard");
    REQUIRE(shard != nullptr);
    CHECK(shard->origin == "default");
    CHECK(shard->note == "1 resolved to 4 for the degrees given (--dry_run)");
    CHECK(provenance.find("distributed_backend") == nullptr);
  }
}
