// docs/llm.md's fine-tuning example: its YAML file resolves to the same configuration as its flags.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "../distributed/launch.hpp"

using namespace shardkit::test;

namespace {

/// The body of the first fenced block of `language` after the heading `heading` in `text`.
std::string fenced_block(const std::string& text, const std::string& heading, const std::string& language) {
  const auto at = text.find(heading);
  REQUIRE(at != std::string::npos);
  const auto open = text.find("```" + language + "\n", at);
  REQUIRE(open != std::string::npos);
  const auto begin = open + 4 + language.size();
  const auto end = text.find("```", begin);
  REQUIRE(end != std::string::npos);
  return text.substr(begin, end - begin);
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

/// --print_config's values without the provenance comments, the config_path line left out.
std::string resolved(const std::vector<std::string>& args) {
  const auto r = run_program("shardkit-train", args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::istringstream in(r.output);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("config_path", 0) == 0) continue;
    out += line.substr(0, line.find(" #")) + "\n";
  }
  return out;
}

/// The example under `heading` of docs/llm.md: its YAML block resolves as the flags of its bash block.
void check_example(const std::string& heading) {
  INFO(heading);
  TempDir dir("sk-llm-docs");
  const auto r = run_command(python() + " " + shell_quote(std::string(SHARDKIT_SOURCE_DIR) +
                                                          "/tests/integration/llm/lm_fixture.py") +
                             " make " + shell_quote(dir.path()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream file(std::string(SHARDKIT_SOURCE_DIR) + "/docs/llm.md");
  const std::string doc((std::istreambuf_iterator<char>(file)), {});
  const auto local = [&](const std::string& s) {
    return replace_all(replace_all(s, "/models/my-llama", dir / "model"), "/data/train.jsonl", dir / "data.jsonl");
  };

  // The command line: every --flag of the bash block (after shardkit-train), paths made local.
  std::istringstream words(local(fenced_block(doc, heading, "bash")));
  std::vector<std::string> flags;
  bool train = false;
  for (std::string w; words >> w;) {
    if (w == "shardkit-train") train = true;
    else if (train && w.rfind("--", 0) == 0) flags.push_back(w);
  }
  REQUIRE(flags.size() >= 8);
  flags.push_back("--print_config=true");

  const auto yaml = dir / "finetune.yaml";
  std::ofstream(yaml) << local(fenced_block(doc, heading, "yaml"));
  const auto from_flags = resolved(flags);
  CHECK(contains(from_flags, "policy.type"));
  CHECK(from_flags == resolved({"--config_path=" + yaml, "--print_config=true"}));
}

}  // namespace

TEST_CASE("docs/llm.md: the fine-tuning example's YAML file resolves exactly as its command line") {
  check_example("## Fine-tuning a Llama");
}

TEST_CASE("docs/llm.md: AITraining's LoRA example's YAML file resolves exactly as its command line") {
  check_example("## LoRA fine-tuning (PEFT)");
}
