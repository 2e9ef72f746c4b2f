// DCP byte items: non-tensor state values round-trip, PyTorch's param-group spellings are read.
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>

#include "shardkit/dcp/folder.hpp"
#include "shardkit/files.hpp"
#include "test_support.hpp"

namespace dcp = shardkit::dcp;
using shardkit::ObjectValue;

TEST_CASE("every kind of non-tensor value round-trips as a DCP byte item", "[dcp][objects]") {
  shardkit::test::TempDir tmp("sk-dcp-objects");
  shardkit::ShardedState state;
  state.objects = {{"optimizer.param_groups.0.lr", 0.00025},
                   {"optimizer.param_groups.0.betas", std::vector<double>{0.9, 0.999}},
                   {"optimizer.param_groups.0.amsgrad", false},
                   {"optimizer.param_groups.0.fused", std::monostate{}},
                   {"optimizer.param_groups.0.count", std::int64_t{-7}},
                   {"optimizer.param_groups.0.name", std::string("grüße")},
                   {"optimizer.param_groups.0.params", std::vector<std::string>{"a.weight", "b"}},
                   {"model.unrelated", true}};
  const auto dir = tmp / "optimizer_0";
  dcp::save_folder(state, "optimizer.", dir, nullptr);
  const auto meta = dcp::FolderReader(dir).metadata();
  REQUIRE(meta.state_dict_metadata.size() == 7);  // "model.unrelated" is outside the prefix
  CHECK(std::holds_alternative<dcp::BytesStorageMetadata>(*meta.find("optimizer.param_groups.0.lr")));

  shardkit::ShardedState wanted;
  for (const auto& [key, value] : state.objects) wanted.objects[key] = std::string("placeholder");
  wanted.objects["optimizer.param_groups.0.absent"] = 1.0;
  dcp::load_folder(wanted, "optimizer.", dir);
  CHECK(wanted.objects.count("optimizer.param_groups.0.absent") == 0);  // what was not loaded is gone
  CHECK(wanted.objects.at("model.unrelated") == ObjectValue(std::string("placeholder")));  // other prefix
  for (const auto& [key, value] : state.objects)
    if (key.rfind("optimizer.", 0) == 0) CHECK(wanted.objects.at(key) == value);
}

TEST_CASE("param groups PyTorch saved per index or per parameter are both read", "[dcp][objects]") {
  shardkit::test::TempDir tmp("sk-dcp-groups");
  // accelerate's spelling (param_groups.<index>.<field>) and flatten_optimizer_state_dict's
  // (param_groups.<first parameter>.<field>), each written by PyTorch's own dcp.save.
  const std::string script = R"(
import sys, warnings, torch, torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict, StateDictOptions
warnings.filterwarnings("ignore")
m = torch.nn.Sequential(torch.nn.Linear(2, 3))
o = torch.optim.AdamW(m.parameters(), lr=0.125, betas=(0.5, 0.75), eps=1e-6, weight_decay=0.25)
for flat, name in ((False, "index"), (True, "parameter")):
    sd = get_optimizer_state_dict(m, o, options=StateDictOptions(flatten_optimizer_state_dict=flat))
    dcp.save({"optimizer": sd}, checkpoint_id=sys.argv[1] + "/" + name)
)";
  const auto script_path = tmp / "save.py";
  shardkit::write_text_file(script_path, script);
  const auto r = shardkit::test::run_command(shardkit::test::python() + " " + shardkit::test::shell_quote(script_path) +
                                             " " + shardkit::test::shell_quote(tmp.path()));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const char* spelling : {"index", "parameter"}) {
    INFO(spelling);
    shardkit::ShardedState wanted;
    wanted.objects = {{"optimizer.param_groups.0.params", std::vector<std::string>{"0.weight", "0.bias"}},
                      {"optimizer.param_groups.0.lr", 0.0},
                      {"optimizer.param_groups.0.betas", std::vector<double>{}},
                      {"optimizer.param_groups.0.eps", 0.0},
                      {"optimizer.param_groups.0.weight_decay", 0.0},
                      {"optimizer.param_groups.0.foreach", true}};
    dcp::load_folder(wanted, "optimizer.", tmp / spelling);
    CHECK(wanted.objects.at("optimizer.param_groups.0.lr") == ObjectValue(0.125));
    CHECK(wanted.objects.at("optimizer.param_groups.0.betas") == ObjectValue(std::vector<double>{0.5, 0.75}));
    CHECK(wanted.objects.at("optimizer.param_groups.0.eps") == ObjectValue(1e-6));
    CHECK(wanted.objects.at("optimizer.param_groups.0.weight_decay") == ObjectValue(0.25));
    CHECK(wanted.objects.at("optimizer.param_groups.0.foreach") == ObjectValue(std::monostate{}));
  }
}
