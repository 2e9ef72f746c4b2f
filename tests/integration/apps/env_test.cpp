// shardkit-env: the report users paste into bug reports lists versions and every plugin found.
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace shardkit::test;

TEST_CASE("shardkit-env reports versions and the built-in plugins", "[apps][env]") {
  const auto r = run_command("env -u SHARDKIT_PLUGIN_PATH '" + std::string(SHARDKIT_BIN_DIR) +
                             "/shardkit-env'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "shardkit 0."));
  CHECK(contains(r.output, "LibTorch 2.15.0"));
  CHECK(contains(r.output, "CPU capability:"));
  CHECK(contains(r.output, "BLAS:"));
  CHECK(contains(r.output, "_GLIBCXX_USE_CXX11_ABI"));
  for (const auto* plugin : {"policy 'mlp'", "dataset 'synthetic'", "backend 'single'",
                             "checkpoint_format 'safetensors'"})
    CHECK(contains(r.output, plugin));
}

TEST_CASE("shardkit-env --json is one JSON object with the plugins", "[apps][env]") {
  const auto r = run_program("shardkit-env", {"--json"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto first = r.output.find_first_not_of(" \n");
  REQUIRE(first != std::string::npos);
  CHECK(r.output[first] == '{');
  CHECK(contains(r.output, "\"mlp\""));
  // Valid JSON according to Python's parser.
  const auto check = run_command("'" + std::string(SHARDKIT_BIN_DIR) +
                                 "/shardkit-env' --json | " + python() + " -c 'import json,sys; "
                                 "d=json.load(sys.stdin); print(\"ok\", len(str(d)))'");
  INFO(check.output);
  CHECK(check.exit_code == 0);
  CHECK(contains(check.output, "ok"));
}

TEST_CASE("shardkit-env names refused plugins and unknown flags", "[apps][env]") {
  const auto refused = run_program("shardkit-env", {
      "--plugins=" + std::string(SHARDKIT_FIXTURE_DIR) + "/libshardkit-policy-bad_torch.so"});
  INFO(refused.output);
  CHECK(refused.exit_code != 0);
  CHECK(contains(refused.output, "bad_torch"));
  CHECK(contains(refused.output, "0.0.1"));
  const auto unknown = run_program("shardkit-env", {"--frobnicate"});
  INFO(unknown.output);
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.output, "--frobnicate"));
}

TEST_CASE("shardkit-env reads its options as shardkit-train does", "[apps][env]") {
  TempDir dir("sk-env-flags");
  // Dashes for underscores, and "--key value".
  const auto r = run_program("shardkit-env", {"--plugin-path", dir.path(), "--json=true"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "\"plugin_path\":[\"" + dir.path() + "\"]"));
  const auto typo = run_program("shardkit-env", {"--jsno"});
  INFO(typo.output);
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.output, "unknown option --jsno"));
  CHECK(contains(typo.output, "did you mean --json?"));
}

TEST_CASE("shardkit-env lists each plugin's capabilities, traits, aliases and hooks", "[apps][env][capability]") {
  // Python reads the JSON report and prints "kind name: capabilities | traits | aliases | hooks" per plugin.
  const auto r = run_command("'" + std::string(SHARDKIT_BIN_DIR) + "/shardkit-env' --json | " + python() +
                             " -c 'import json,sys\n"
                             "for p in json.load(sys.stdin)[\"plugins\"][\"found\"]:\n"
                             "    print(p[\"kind\"], p[\"name\"] + \":\", \",\".join(p[\"capabilities\"]), \"|\","
                             " \",\".join(p[\"traits\"]), \"|\", \",\".join(p[\"aliases\"]), \"|\","
                             " \",\".join(p[\"hooks\"]))'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "policy act: normalization/1,pretrained_config/1,optimizer_preset/1,lora_targets/1 |"));
  CHECK(contains(r.output, "policy llama: pretrained_config/1,pretrained_weights/1,pretrained_files/1,causal_lm/1,"
                           "lora_targets/1,token_embeddings/1 |"));
  CHECK(contains(r.output, "policy mlp: normalization/1 |"));
  CHECK(contains(r.output, "dataset lerobot: dataset_statistics/1,augmentation/1 |"));
  CHECK(contains(r.output, "dataset text: dataset_preview/1,dataset_tokenizer/1 |"));
  CHECK(contains(r.output, "backend fsdp: sharding_report/1 | shards_parameters,multi_process,preferred_by_auto |  | \n"));
  CHECK(contains(r.output, "backend ddp:  | multi_process,preferred_by_auto |  | \n"));
  CHECK(contains(r.output, "backend single:  | preferred_by_auto |  | \n"));
  CHECK(contains(r.output, "backend zero: sharding_report/1 | shards_parameters,multi_process | deepspeed | "
                           "config_layer,config_check\n"));
  CHECK(contains(r.output, "checkpoint_format dcp:  | accepts_sharded_state"));

  const auto text = run_program("shardkit-env", {});
  INFO(text.output);
  CHECK(contains(text.output, "      capabilities: sharding_report/1\n"
                              "      traits: shards_parameters, multi_process, preferred_by_auto\n"));
  CHECK(contains(text.output, "      aliases: deepspeed\n      capabilities: sharding_report/1\n"
                              "      traits: shards_parameters, multi_process\n      hooks: config_layer, config_check\n"));
}
