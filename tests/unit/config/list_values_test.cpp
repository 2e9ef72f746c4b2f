// List-valued options: items split at their separator, trimmed, empty ones dropped.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "shardkit/comma_list.hpp"

using Items = std::vector<std::string>;

TEST_CASE("a comma list keeps its items trimmed and drops empty ones") {
  CHECK(shardkit::comma_list("q_proj, v_proj") == Items{"q_proj", "v_proj"});
  CHECK(shardkit::comma_list(" a ,\tb\t,, ,c") == Items{"a", "b", "c"});
  CHECK(shardkit::comma_list("").empty());
  CHECK(shardkit::comma_list(",,").empty());
  CHECK(shardkit::comma_list("one") == Items{"one"});
}

TEST_CASE("a path list splits at its own separator only") {
  CHECK(shardkit::split_list("/opt/a:/opt/b", ':') == Items{"/opt/a", "/opt/b"});
  CHECK(shardkit::split_list("a.so, b.so", ',') == Items{"a.so", "b.so"});
  CHECK(shardkit::split_list("/x,y:/z", ':') == Items{"/x,y", "/z"});
  CHECK(shardkit::split_list(":/only:", ':') == Items{"/only"});
}
