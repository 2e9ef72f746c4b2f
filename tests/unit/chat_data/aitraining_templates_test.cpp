// The templates --dataset.chat_template=chatml|zephyr and the no-template fallback install are
// AITraining's, byte for byte (tests/data/chat-templates/ holds them as AITraining's source has them).
#include "chat_format.hpp"
#include "test_support.hpp"
#undef CHECK
#include <catch2/catch.hpp>

using shardkit::text::aitraining_template;

TEST_CASE("AITraining's chatml, zephyr and fallback templates, byte for byte", "[chat_data][templates]") {
  const std::string dir = std::string(SHARDKIT_SOURCE_DIR) + "/tests/data/chat-templates/";
  CHECK(aitraining_template("chatml") == shardkit::test::slurp(dir + "aitraining_chatml.jinja"));
  CHECK(aitraining_template("zephyr") == shardkit::test::slurp(dir + "zephyr.jinja"));
  CHECK(aitraining_template("fallback") == shardkit::test::slurp(dir + "aitraining_default.jinja"));
  CHECK(aitraining_template("llama3").empty());
}
