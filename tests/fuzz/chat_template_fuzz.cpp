// Fuzz target for the chat-template renderer: no template crashes, hangs or exhausts it; each is
// either refused with an error or rendered.
//
// Built and run by scripts/fuzz.sh (libFuzzer with ASan and UBSan; `scripts/fuzz.sh 60 chat_template`).
// The test suite replays the committed corpus through the same function (replay_main.cpp).
#include <boost/json/parse.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <string>

#include "chat_template/chat_template.hpp"
#include "shardkit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardkit::chat;
  const std::string source(reinterpret_cast<const char*>(data), size);
  static const auto messages = boost::json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi ☕"},
          {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}])").as_array();
  try {
    const auto tmpl = ChatTemplate::parse(source, "fuzz.jinja");
    for (const bool prompt : {false, true}) {
      RenderInput in;
      in.messages = messages;
      in.add_generation_prompt = prompt;
      in.special_tokens = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
      in.now = std::tm{};
      tmpl.render_with_spans(in);
    }
  } catch (const shardkit::Error&) {
    return 0;  // refused or failed with a message naming the template: what bad input must get
  } catch (const std::exception& e) {
    std::fprintf(stderr, "an error other than shardkit's escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
