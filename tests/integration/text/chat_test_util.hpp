// Helpers for the chat data tests: chat tokenizer folders made by Python `tokenizers`, and conversations.
#pragma once

#include <stdexcept>
#include <string>

#include "text_test_util.hpp"

namespace shardkit::test {

/// make_chat_tokenizers.py's folders (llama3_chat, llama3_generation, chatml, zephyr, mistral), made once.
inline const std::string& chat_tokenizers() {
  static const TempDir dir("sk-chat-tokenizers");
  static const bool made = [] {
    const auto r = run_command(python() + " " +
                               shell_quote(std::string(SHARDKIT_SOURCE_DIR) + "/tests/integration/text/make_chat_tokenizers.py") +
                               " " + shell_quote(dir.path()) + " 2000");
    if (r.exit_code != 0) throw std::runtime_error("make_chat_tokenizers.py failed:\n" + r.output);
    return true;
  }();
  (void)made;
  static const std::string path = dir.path();
  return path;
}

// Conversations with what templates must get right: a system turn, several turns, Unicode, a long
// user turn (the assistant falls past max_seq_len: dropped), a first answer cut by max_seq_len.
inline const char* const kConversations[] = {
    R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "How many apples?"}, {"role": "assistant", "content": "The answer is three apples."}])",
    R"([{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Explain gradient descent."}, {"role": "assistant", "content": "It takes small steps downhill.\n\nAgain and again."}])",
    R"([{"role": "user", "content": "Привет, café — 你好 👋"}, {"role": "assistant", "content": "Bonjour ✓ naïve"}])",
    R"([{"role": "user", "content": "The user reads a long list of words. The model writes a short story. The tokenizer checks the answer. A model explains the weather today. The system asks about Paris and London. My friend trains the next step. This shard returns your message. The assistant helps with a test. The user answers the question again."}, {"role": "assistant", "content": "Too late."}])",
    R"([{"role": "user", "content": "Short?"}, {"role": "assistant", "content": "Yes, short."}])",
};

/// kConversations as dir/chat.jsonl (a `messages` field per line); returns its path.
inline std::string write_chat_jsonl(const TempDir& dir) {
  std::string jsonl;
  for (const auto* c : kConversations) jsonl += std::string("{\"id\": 1, \"messages\": ") + c + "}\n";
  const auto path = dir / "chat.jsonl";
  write_file(path, jsonl);
  return path;
}

}  // namespace shardkit::test
