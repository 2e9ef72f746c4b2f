// Finding conversations in .jsonl and .csv files as AITraining finds them: `messages` wins, a text
// column holding a list is a conversation, CSV cells hold JSON or Python literals.
#include <boost/json.hpp>

#include "documents.hpp"
#include "shardkit/error.hpp"
#include "test_support.hpp"
#undef CHECK
#include <catch2/catch.hpp>

#include <fstream>

using shardkit::text::Documents;
using shardkit::text::read_documents;
using shardkit::text::SampleBy;

namespace {

Documents read(const shardkit::test::TempDir& dir, const std::string& name, const std::string& content,
               const std::string& column = "text") {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << content;
  Documents docs;
  read_documents(path, column, SampleBy::Line, docs);
  return docs;
}

std::string error_of(const shardkit::test::TempDir& dir, const std::string& name, const std::string& content) {
  try {
    read(dir, name, content);
  } catch (const shardkit::Error& e) {
    return e.what();
  }
  return "";
}

const auto kHello = boost::json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])");

}  // namespace

TEST_CASE("jsonl: a messages list wins over the text column; a text column holding a list is a conversation",
          "[chat_data][documents]") {
  shardkit::test::TempDir dir;
  const auto docs = read(dir, "chat.jsonl",
                         R"({"text": "ignored", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]})"
                         "\n"
                         R"({"text": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]})"
                         "\n\n"
                         R"({"messages": []})"
                         "\n");
  REQUIRE(docs.chat());
  REQUIRE(docs.conversations.size() == 3);
  CHECK(docs.texts.empty());
  CHECK(docs.conversations[0] == kHello);
  CHECK(docs.conversations[1] == kHello);
  CHECK(docs.conversations[2] == boost::json::array{});  // reported when it is rendered
  CHECK(docs.where[2] == dir / "chat.jsonl" + ":4");
}

TEST_CASE("csv: a messages column holds JSON or a Python literal; a text cell holding messages is a conversation",
          "[chat_data][documents]") {
  shardkit::test::TempDir dir;
  const auto with_messages = read(dir, "m.csv",
                                  "id,messages\n"
                                  "1,\"[{\"\"role\"\": \"\"user\"\", \"\"content\"\": \"\"Hi\"\"}, {\"\"role\"\": \"\"assistant\"\", "
                                  "\"\"content\"\": \"\"Hello\"\"}]\"\n"
                                  "2,\"[{'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello'}]\"\n"
                                  "3,not a list\n");
  REQUIRE(with_messages.conversations.size() == 3);
  CHECK(with_messages.conversations[0] == kHello);
  CHECK(with_messages.conversations[1] == kHello);
  CHECK(with_messages.conversations[2] == boost::json::value("not a list"));  // reported when rendered

  const auto in_text = read(dir, "t.csv", "text\n\"[{'role': 'user', 'content': 'Hi'}, {'role': 'assistant', 'content': 'Hello'}]\"\n");
  REQUIRE(in_text.conversations.size() == 1);
  CHECK(in_text.conversations[0] == kHello);

  const auto plain = read(dir, "p.csv", "text\n[1] is a citation\n\"[{'a': 1}]\"\n");
  CHECK_FALSE(plain.chat());
  CHECK(plain.texts == std::vector<std::string>{"[1] is a citation", "[{'a': 1}]"});
}

TEST_CASE("plain text and conversations in one dataset are refused, naming both places", "[chat_data][documents]") {
  shardkit::test::TempDir dir;
  const auto message = error_of(dir, "mixed.jsonl",
                                "{\"text\": \"plain\"}\n{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}\n");
  CHECK(message == dir / "mixed.jsonl" + ":2: a conversation in data whose documents are plain text (the first at " +
                       dir / "mixed.jsonl" + ":1): keep chat and plain-text data in separate runs");
  CHECK(error_of(dir, "none.jsonl", "{\"body\": \"x\"}\n") ==
        dir / "none.jsonl" + ":1: no field 'text' (fields: body); choose one with --dataset.text_column, or give "
                             "conversations a 'messages' list");
}
