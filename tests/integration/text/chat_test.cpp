// Conversations (a messages column) rendered with the tokenizer's chat template: the token ids and
// labels equal what transformers + TRL 1.16's SFTTrainer produce (assistant-only loss from
// {% generation %} blocks), and AITraining's response-marker rule for templates without them.
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <filesystem>

#include "chat_test_util.hpp"
#include "shardkit/capability.hpp"
#include "shardkit/token_embeddings.hpp"

using namespace shardkit::test;

namespace {

struct ChatExpected {
  std::vector<std::vector<std::int64_t>> ids, labels;
  std::int64_t vocab_size = 0, pad_id = 0;  ///< len(tokenizer) and its pad id
};

// expected_chat.py: TRL's SFTTrainer (modes all, generation) or the marker rule (markers).
ChatExpected python_chat(const std::string& tokenizer, const std::string& data, std::int64_t seq_len,
                         const std::string& mode, const TempDir& dir, const std::string& extra_args = "") {
  const auto out = dir / ("expected-" + mode + ".json");
  const auto r = run_command(python() + " " +
                             shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/text/expected_chat.py") +
                             " " + shell_quote(tokenizer) + " " + shell_quote(data) + " " + std::to_string(seq_len) +
                             " " + mode + " " + shell_quote(out) + extra_args);
  if (r.exit_code != 0) throw std::runtime_error("expected_chat.py failed:\n" + r.output);
  const auto root = boost::json::parse(slurp(out)).as_object();
  const auto rows = [&](const char* key) {
    std::vector<std::vector<std::int64_t>> all;
    for (const auto& row : root.at(key).as_array()) {
      all.emplace_back();
      for (const auto& v : row.as_array()) all.back().push_back(v.to_number<std::int64_t>());
    }
    return all;
  };
  return {rows("input_ids"), rows("labels"), root.at("vocab_size").to_number<std::int64_t>(),
          root.at("pad_id").to_number<std::int64_t>()};
}

// Our samples equal Python's, row by row: ids, labels, then padding (pad id, label -100, mask 0).
void require_same(const shardkit::Batch& got, const ChatExpected& want, std::int64_t seq_len, std::int64_t pad) {
  REQUIRE(got.at("input_ids").size(0) == static_cast<std::int64_t>(want.ids.size()));
  for (std::size_t r = 0; r < want.ids.size(); ++r) {
    const auto n = static_cast<std::int64_t>(want.ids[r].size());
    REQUIRE(n <= seq_len);
    const auto row = static_cast<std::int64_t>(r);
    std::vector<std::int64_t> ids(seq_len, pad), labels(seq_len, -100), mask(seq_len, 0);
    std::copy(want.ids[r].begin(), want.ids[r].end(), ids.begin());
    std::copy(want.labels[r].begin(), want.labels[r].end(), labels.begin());
    std::fill_n(mask.begin(), n, 1);
    INFO("row " << r << "\n ours:   " << got.at("input_ids")[row] << "\n labels: " << got.at("labels")[row]);
    CHECK(at::equal(got.at("input_ids")[row], at::tensor(ids, at::kLong)));
    CHECK(at::equal(got.at("labels")[row], at::tensor(labels, at::kLong)));
    CHECK(at::equal(got.at("attention_mask")[row], at::tensor(mask, at::kLong)));
  }
}

std::int64_t pad_of(const std::string& tokenizer_dir) {
  const auto config = boost::json::parse(slurp(tokenizer_dir + "/tokenizer_config.json")).as_object();
  const auto tok = boost::json::parse(slurp(tokenizer_dir + "/tokenizer.json")).as_object();
  const auto pad = config.at("pad_token").as_string();
  for (const auto& t : tok.at("added_tokens").as_array())
    if (t.at("content").as_string() == pad) return t.at("id").to_number<std::int64_t>();
  throw std::runtime_error("no pad token in " + tokenizer_dir);
}

}  // namespace

TEST_CASE("chat data: ids and assistant-only labels equal TRL's SFTTrainer with a {% generation %} template",
          "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  for (const std::int64_t seq_len : {64, 512}) {
    INFO("max_seq_len " << seq_len);
    auto dataset = open_text({{"path", data}, {"tokenizer", tokenizer}, {"max_seq_len", seq_len},
                              {"cache_dir", dir / "cache"}});
    require_same(all_samples(*dataset), python_chat(tokenizer, data, seq_len, "generation", dir), seq_len,
                 pad_of(tokenizer));
  }
}

TEST_CASE("chat data: with response_only_loss=false every token is a label, as TRL's SFTTrainer", "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  const auto tokenizer = chat_tokenizers() + "/llama3_chat";
  auto dataset = open_text({{"path", data}, {"tokenizer", tokenizer}, {"max_seq_len", std::int64_t{64}},
                            {"response_only_loss", false}, {"cache_dir", dir / "cache"}});
  require_same(all_samples(*dataset), python_chat(tokenizer, data, 64, "all", dir), 64, pad_of(tokenizer));
}

TEST_CASE("chat data: templates without generation blocks are labelled by their response markers", "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  // (mistral: a sentencepiece-style tokenizer, Metaspace and byte fallback, with the [/INST] marker.)
  for (const auto* family : {"llama3_chat", "chatml", "zephyr", "mistral"}) {
    const auto tokenizer = chat_tokenizers() + "/" + family;
    INFO(family);
    auto dataset = open_text({{"path", data}, {"tokenizer", tokenizer}, {"max_seq_len", std::int64_t{96}},
                              {"cache_dir", dir / "cache"}});
    require_same(all_samples(*dataset), python_chat(tokenizer, data, 96, "markers", dir), 96, pad_of(tokenizer));
  }
}

TEST_CASE("chat data: chatml and zephyr give the tokenizer AITraining's special tokens and template, as transformers "
          "does; the files saved load as AITraining's tokenizer", "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  // A tokenizer lacking every token; Mistral's has <s> and </s>; zephyr's has <s>; chatml's has all but <s>, <pad>.
  const std::pair<const char*, const char*> cases[] = {
      {"llama3_chat", "chatml"}, {"mistral", "zephyr"}, {"zephyr", "chatml"}, {"chatml", "zephyr"}, {"chatml", "chatml"}};
  for (const auto& [family, name] : cases) {
    const auto tokenizer = chat_tokenizers() + "/" + family;
    INFO(family << " with --dataset.chat_template=" << name);
    auto dataset = open_text({{"path", data}, {"tokenizer", tokenizer}, {"max_seq_len", std::int64_t{96}},
                              {"chat_template", std::string(name)}, {"cache_dir", dir / "cache"}});
    const auto* tokens = shardkit::capability<shardkit::DatasetTokenizer>(*dataset);
    REQUIRE(tokens != nullptr);
    const auto saved = dir / (std::string("saved-") + family + "-" + name);
    std::filesystem::create_directories(saved);
    const auto files = tokens->tokenizer_files();
    CHECK(files.size() == 3);
    for (const auto& [file, content] : files) write_file(saved + "/" + file, content);
    const auto want = python_chat(tokenizer, data, 96, "markers", dir, std::string(" ") + name + " " + shell_quote(saved));
    CHECK(tokens->token_count() == want.vocab_size);
    require_same(all_samples(*dataset), want, 96, want.pad_id);
  }
}

TEST_CASE("chat data: a csv messages column (JSON or Python literal) gives the jsonl's samples", "[text][chat]") {
  TempDir dir;
  const auto jsonl = write_chat_jsonl(dir);
  std::string csv = "id,messages\n";
  int i = 0;
  for (const auto* c : kConversations) {
    std::string cell = c;
    if (i++ % 2) {  // every other row as Python's repr would write it
      for (auto& ch : cell) ch = ch == '"' ? '\'' : ch;
    }
    std::string quoted = "\"";
    for (const char ch : cell) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    csv += std::to_string(i) + "," + quoted + "\"\n";
  }
  write_file(dir / "chat.csv", csv);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  const auto from_jsonl = all_samples(*open_text({{"path", jsonl}, {"tokenizer", tokenizer},
                                                  {"max_seq_len", std::int64_t{128}}, {"cache_dir", dir / "cache"}}));
  const auto from_csv = all_samples(*open_text({{"path", dir / "chat.csv"}, {"tokenizer", tokenizer},
                                                {"max_seq_len", std::int64_t{128}}, {"cache_dir", dir / "cache"}}));
  for (const auto* key : {"input_ids", "labels", "attention_mask"}) CHECK(at::equal(from_jsonl.at(key), from_csv.at(key)));
}

TEST_CASE("chat data: a parquet messages column (list<struct<role, content>>) gives the jsonl's samples",
          "[text][chat]") {
  TempDir dir;
  const auto jsonl = write_chat_jsonl(dir);
  // pyarrow writes the conversations as Hugging Face datasets stores them (row groups of 2: the
  // column is read in chunks), and a file without them.
  const auto r = run_command(python() + " -c " + shell_quote(
      "import json, sys, pyarrow as pa, pyarrow.parquet as pq\n"
      "rows = [json.loads(l) for l in open(sys.argv[1])]\n"
      "pq.write_table(pa.table({'id': [r['id'] for r in rows], 'messages': [r['messages'] for r in rows]}), sys.argv[2],\n"
      "               row_group_size=2)\n"
      "pq.write_table(pa.table({'id': [1, 2], 'body': ['a', 'b']}), sys.argv[3])\n") +
      " " + shell_quote(jsonl) + " " + shell_quote(dir / "chat.parquet") + " " + shell_quote(dir / "other.parquet"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  const auto options = [&](const std::string& path) {
    return std::map<std::string, shardkit::Value>{{"path", path}, {"tokenizer", tokenizer},
                                                   {"max_seq_len", std::int64_t{128}}, {"cache_dir", dir / "cache"}};
  };
#if SHARDKIT_TEXT_PARQUET
  const auto from_jsonl = all_samples(*open_text(options(jsonl)));
  const auto from_parquet = all_samples(*open_text(options(dir / "chat.parquet")));
  for (const auto* key : {"input_ids", "labels", "attention_mask"})
    CHECK(at::equal(from_jsonl.at(key), from_parquet.at(key)));
  const auto error = text_error(options(dir / "other.parquet"));
  CHECK(contains(error, "other.parquet: no column 'text' (columns: id, body)"));
#else
  // A build without the Arrow/Parquet SDK refuses .parquet files, saying so.
  CHECK(contains(text_error(options(dir / "chat.parquet")), "this build of shardkit reads no .parquet files"));
#endif
}

TEST_CASE("chat data: a conversation that cannot be rendered names its file, line and index; skip counts it",
          "[text][chat]") {
  TempDir dir;
  const auto path = dir / "bad.jsonl";
  write_file(path, std::string("{\"messages\": ") + kConversations[0] + "}\n" +
                       "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}\n\n{\"messages\": []}\n");
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  CHECK(text_error({{"path", path}, {"tokenizer", tokenizer}, {"cache_dir", dir / "cache"}}) ==
        path + ":2: conversation 1: message 0 (role 'user') has no string 'content' (--dataset.on_bad_example=skip "
               "leaves such conversations out)");
  auto dataset = open_text({{"path", path}, {"tokenizer", tokenizer}, {"on_bad_example", std::string("skip")},
                            {"cache_dir", dir / "cache"}});
  CHECK(dataset->size() == 1);

  // The template's own raise_exception, with its message (Mistral's refuses a wrong role order).
  const auto mistral = dir / "mistral.jinja";
  std::filesystem::copy_file(std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/chat-templates/mistral_v0_3.jinja", mistral);
  write_file(dir / "order.jsonl", "{\"messages\": [{\"role\": \"assistant\", \"content\": \"first\"}]}\n");
  const auto raised = text_error({{"path", dir / "order.jsonl"}, {"tokenizer", tokenizer},
                                  {"chat_template", mistral}, {"cache_dir", dir / "cache"}});
  INFO(raised);
  CHECK(contains(raised, dir / "order.jsonl:1: conversation 0: "));
  CHECK(contains(raised, "the template raised an error: "));
}

TEST_CASE("chat data: the chat template options refuse what they cannot do, saying what to give", "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  const auto cache = dir / "cache";
  CHECK(contains(text_error({{"path", data}, {"tokenizer", tokenizer}, {"chat_template", std::string("none")},
                             {"cache_dir", cache}}),
                 "--dataset.chat_template=none trains on plain text only: give --dataset.chat_template=tokenizer"));
  CHECK(contains(text_error({{"path", data}, {"tokenizer", tokenizer}, {"chat_template", dir / "missing.jinja"},
                             {"cache_dir", cache}}),
                 "missing.jinja: not tokenizer, chatml, zephyr or none, and no such .jinja file"));
  // A template with neither {% generation %} blocks nor a known response marker.
  write_file(dir / "plain.jinja", "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}");
  const std::map<std::string, shardkit::Value> plain = {
      {"path", data}, {"tokenizer", tokenizer}, {"chat_template", dir / "plain.jinja"}, {"cache_dir", dir / "cache"}};
  CHECK(contains(text_error(plain), "has no {% generation %} blocks and none of the response markers"));
  auto whole = plain;
  whole["response_only_loss"] = false;
  CHECK(open_text(whole)->size() == 5);
}

TEST_CASE("--dataset.preview prints the first examples as TRL would train on them, and trains nothing",
          "[text][chat]") {
  TempDir dir;
  const auto data = write_chat_jsonl(dir);
  const auto tokenizer = chat_tokenizers() + "/llama3_generation";
  const auto r = run_program("shardkit-train", {"--policy.type=llama", "--dataset.type=text", "--dataset.path=" + data,
                                                "--dataset.tokenizer=" + tokenizer, "--dataset.max_seq_len=512",
                                                "--dataset.preview=2", "--output_dir=" + dir / "run"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "run"));
  const auto want = python_chat(tokenizer, data, 512, "generation", dir);
  std::vector<boost::json::object> lines;
  for (std::size_t at = 0; (at = r.output.find("{\"text\":", at)) != std::string::npos;) {
    const auto end = r.output.find('\n', at);
    lines.push_back(boost::json::parse(r.output.substr(at, end - at)).as_object());
    at = end;
  }
  REQUIRE(lines.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    std::vector<std::int64_t> ids, labels;
    for (const auto& v : lines[i].at("input_ids").as_array()) ids.push_back(v.to_number<std::int64_t>());
    for (const auto& v : lines[i].at("labels").as_array()) labels.push_back(v.to_number<std::int64_t>());
    CHECK(ids == want.ids[i]);
    CHECK(labels == want.labels[i]);
    CHECK(contains(std::string(lines[i].at("text").as_string()), "<|start_header_id|>assistant<|end_header_id|>"));
  }
}
