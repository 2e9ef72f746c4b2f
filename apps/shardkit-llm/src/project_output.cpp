// The final model, model card and runs/ of an AITraining project folder.
#include "project_output.hpp"

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "llm_translate.hpp"
#include "shardkit/error.hpp"
#include "shardkit/safetensors.hpp"
#include "shardkit/safetensors_torch.hpp"

namespace shardkit::llm {
namespace fs = std::filesystem;
namespace {

/// The base model's dtype from its config.json (transformers 5's "dtype", older "torch_dtype").
std::string base_dtype(const std::string& model) {
  const auto config = model_config(model);
  for (const char* key : {"dtype", "torch_dtype"})
    if (const auto* v = config.if_contains(key); v && v->is_string()) return std::string(v->as_string());
  return "";
}

/// Rewrites the safetensors files and config.json in `folder` in `dtype` (bfloat16 or float16).
void cast_model(const fs::path& folder, const std::string& dtype) {
  const auto type = dtype == "bfloat16" ? at::kBFloat16 : at::kHalf;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".safetensors") continue;
    std::vector<at::Tensor> kept;
    std::vector<safetensors::TensorRef> refs;
    {
      const auto file = safetensors::File::open(entry.path().string());
      for (const auto& name : file.names()) {
        auto t = safetensors::to_tensor(file.get(name));
        if (t.is_floating_point()) t = t.to(type);
        kept.push_back(t.contiguous());
        refs.push_back(safetensors::ref_of(name, kept.back()));
      }
    }
    const auto tmp = entry.path().string() + ".tmp";
    safetensors::write_file(tmp, refs, {{"format", "pt"}});
    fs::rename(tmp, entry.path());
  }
  auto config = model_config(folder.string());
  if (config.empty()) return;
  if (config.contains("torch_dtype")) config["torch_dtype"] = dtype;
  config["dtype"] = dtype;
  std::ofstream(folder / "config.json") << boost::json::serialize(config) << "\n";
}

std::string model_card(const Params& p, bool adapter) {
  std::string card = "---\ntags:\n- autotrain\n- shardkit\n- text-generation-inference\n- text-generation\n";
  if (p.flag("peft")) card += "- peft\n";
  card += "library_name: " + std::string(adapter ? "peft" : "transformers") + "\nbase_model: " + p.text("model") +
          "\nwidget:\n  - messages:\n      - role: user\n        content: What is your favorite condiment?\n"
          "license: other\n---\n\n# Model Trained Using shardkit-llm\n\n"
          "This model was trained with shardkit-llm, which takes AITraining's `llm --train` options "
          "(trainer: " + p.text("trainer") + ", base model: " + p.text("model") + ", data: " + p.text("data_path") +
          "; every option in training_params.json).\n\n# Usage\n\n```python\n"
          "from transformers import AutoModelForCausalLM, AutoTokenizer\n\nmodel_path = \"PATH_TO_THIS_REPO\"\n\n"
          "tokenizer = AutoTokenizer.from_pretrained(model_path)\n"
          "model = AutoModelForCausalLM.from_pretrained(model_path, device_map=\"auto\", torch_dtype=\"auto\").eval()\n"
          "```\n";
  return card;
}

}  // namespace

std::vector<std::string> finish_project(const std::string& project, const Params& params) {
  std::vector<std::string> done;
  const fs::path root(project);
  std::error_code ec;
  const bool merged = params.flag("peft") && params.flag("merge_adapter") && fs::is_directory(root / "merged_model", ec);
  fs::path source = root / "merged_model";
  if (!merged) {
    const auto last = fs::canonical(root / "checkpoints" / "last", ec);
    if (ec) return done;  // no checkpoint (--save_checkpoint=false): nothing to lay out
    source = last / "pretrained_model";
  }
  if (!fs::is_directory(source, ec)) return done;
  // The model and its tokenizer at the top, as AITraining saves them; shardkit's own records stay
  // in the checkpoints.
  static const std::set<std::string> kRecords = {"train_config.json", "train_config.provenance.json"};
  std::size_t copied = 0;
  for (const auto& entry : fs::directory_iterator(source)) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || kRecords.count(name)) continue;
    fs::copy_file(entry.path(), root / name, fs::copy_options::overwrite_existing, ec);
    if (ec) throw RuntimeError("cannot copy " + entry.path().string() + " to " + project + ": " + ec.message());
    ++copied;
  }
  for (const char* adapter_file : {"adapter_model.safetensors", "adapter_config.json"})
    if (merged) fs::remove(root / adapter_file, ec);  // AITraining removes them once merged
  const auto dtype = base_dtype(params.text("model"));
  if (merged && (dtype == "bfloat16" || dtype == "float16")) cast_model(root, dtype);
  done.push_back(std::to_string(copied) + " files of " + source.string() + " copied to " + project +
                 (merged ? " (the merged model" + (dtype.empty() ? std::string() : ", in the base model's " + dtype) + ")"
                         : params.flag("peft") ? " (the adapter)" : " (the model)"));
  std::ofstream(root / "README.md") << model_card(params, params.flag("peft") && !merged);
  // runs/: where transformers' Trainer writes TensorBoard files.
  if (fs::is_directory(root / "tensorboard", ec) && !fs::exists(fs::symlink_status(root / "runs", ec))) {
    fs::create_directory_symlink("tensorboard", root / "runs", ec);
    if (!ec) done.push_back("runs/ -> tensorboard/ (TensorBoard files)");
  }
  return done;
}

}  // namespace shardkit::llm
