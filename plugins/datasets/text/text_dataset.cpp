// Building the text dataset: files -> documents -> tokens (cached) -> split -> samples.
#include "text_dataset.hpp"

#include <spdlog/logger.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <ATen/ATen.h>

#include "data_splits.hpp"
#include "shardkit/error.hpp"
#include "shardkit/logging.hpp"
#include "shardkit/runtime.hpp"
#include "tokenize_documents.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace fs = std::filesystem;
namespace {

SampleBy sample_by(const std::string& s) {
  if (s == "paragraph") return SampleBy::Paragraph;
  if (s == "document") return SampleBy::Document;
  return SampleBy::Line;
}

// --dataset.tokenizer, else --policy.path (a Hugging Face model folder holds tokenizer.json).
std::string tokenizer_path(const PluginContext& ctx) {
  auto path = ctx.options.get_string("tokenizer");
  if (path.empty() && ctx.full_config && ctx.full_config->has("policy.path"))
    path = ctx.full_config->get_string("policy.path");
  if (path.empty())
    throw ConfigError("the text dataset needs a tokenizer: give --dataset.tokenizer=<tokenizer.json or a folder "
                      "holding one> (or --policy.path=<a Hugging Face model folder with tokenizer.json>)");
  return path;
}

// The tokenized documents of `files`: from the cache when it has them, else tokenized now
// (and cached by the node's first rank).
TokenizedDocs load_tokens(const std::vector<std::string>& files, const Tokenizer& tokenizer,
                          const std::string& tokenizer_file, const PluginContext& ctx, spdlog::logger& log) {
  const auto& o = ctx.options;
  const auto column = o.get_string("text_column");
  const auto by = o.get_string("sample_by");
  const auto folder = cache_folder(o.get_string("cache_dir"));
  const auto config_file = (fs::path(tokenizer_file).parent_path() / "tokenizer_config.json").string();
  const auto key = cache_key(files, {tokenizer_file, config_file}, "text_column=" + column + "\nsample_by=" + by);
  const auto cache_file = folder + "/" + key + ".tokens";
  std::string problem;
  if (auto cached = read_token_cache(cache_file, problem)) {
    log.info("text dataset: {} documents ({} tokens) read from the token cache {}", cached->size(),
             cached->tokens.size(), cache_file);
    return std::move(*cached);
  }
  if (!problem.empty()) log.warn("text dataset: ignoring the token cache {}: {}", cache_file, problem);

  Documents documents;
  for (const auto& f : files) read_documents(f, column, sample_by(by), documents);
  if (documents.texts.empty())
    throw ConfigError("the text dataset is empty: " + std::to_string(files.size()) + " file(s) under --dataset.path " +
                      "hold no non-empty document" + (files.empty() ? "" : " (first: " + files.front() + ")"));
  const auto local_ranks = ctx.runtime ? std::max(1, ctx.runtime->local_world_size) : 1;
  auto threads = static_cast<int>(o.get_int("num_threads"));
  if (threads == 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks);
  log.info("text dataset: tokenizing {} documents from {} file(s) on {} thread(s){}", documents.texts.size(),
           files.size(), threads,
           documents.empty_skipped ? " (" + std::to_string(documents.empty_skipped) + " empty ones skipped)" : "");
  auto docs = tokenize_documents(documents, tokenizer, threads, log);
  // One writer per node (the cache folder is usually node-local); the others keep their own
  // result in memory. The rename makes the file appear whole or not at all.
  if (!ctx.runtime || ctx.runtime->local_rank == 0) {
    write_token_cache(cache_file, docs);
    log.info("text dataset: token cache written to {}", cache_file);
  }
  return docs;
}

}  // namespace

TextDataset::TextDataset(const PluginContext& ctx) {
  const auto& o = ctx.options;
  auto log = ctx.logger ? ctx.logger : shardkit::logger();
  seq_len_ = o.get_int("max_seq_len");
  packing_ = o.get_bool("packing");
  const auto split = o.get_string("split");
  const auto fraction = o.get_float("validation_fraction");
  const auto validation_path = o.get_string("validation_path");
  const auto path = o.get_string("path");
  if (fraction > 0 && !validation_path.empty())
    throw ConfigError("--dataset.validation_fraction and --dataset.validation_path are both set: give one");
  // A folder whose file names give splits (train.jsonl, validation.jsonl) is split by them.
  std::vector<std::string> folder_files;
  NamedSplits named;
  if (std::error_code ec; fs::is_directory(path, ec)) {
    folder_files = data_files(path, "--dataset.path");
    named = split_by_file_name(folder_files);
  }
  if (!named.validation.empty() && (fraction > 0 || !validation_path.empty()))
    throw ConfigError(std::string(fraction > 0 ? "--dataset.validation_fraction" : "--dataset.validation_path") +
                      " is set, and --dataset.path=" + path + " has validation files by name (" +
                      file_names(named.validation) + "), which are its validation split: give one (drop the option, "
                      "or rename the files)");
  if (split == "validation" && fraction <= 0 && validation_path.empty() && named.validation.empty())
    throw ConfigError("--dataset.split=validation needs --dataset.validation_fraction (> 0), "
                      "--dataset.validation_path, or validation files in the --dataset.path folder (named "
                      "validation*, valid*, dev* or val*, as Hugging Face datasets splits a folder)");

  const auto tok_path = tokenizer_path(ctx);
  const auto tokenizer = Tokenizer::load(tok_path);
  const auto tokenizer_file = fs::is_directory(tok_path) ? (fs::path(tok_path) / "tokenizer.json").string() : tok_path;
  std::vector<std::string> files;
  if (split == "validation" && !validation_path.empty()) {
    files = data_files(validation_path, "--dataset.validation_path");
  } else if (named.any()) {
    files = split == "validation" && !named.validation.empty() ? named.validation : named.train;
    if (files.empty())
      throw ConfigError("--dataset.path=" + path + " is split by its file names, as Hugging Face datasets splits a "
                        "folder (train: " + file_names(named.train) + "; validation: " +
                        file_names(named.validation) + "; test: " + file_names(named.test) + "), and no file is in "
                        "the train split: name the training files train* or training* (followed by -, _, ., a "
                        "space or a digit), or give --dataset.path one file");
    if (split == "train") {
      log->info("text dataset: --dataset.path={} is split by file name (as Hugging Face datasets): train: {}; "
                "validation: {}; test: {} (not read)", path, file_names(named.train), file_names(named.validation),
                file_names(named.test));
      if (!named.unnamed.empty())
        log->warn("text dataset: --dataset.path={}: not read, as their names give no split while the folder's "
                  "other files are split by name: {}", path, file_names(named.unnamed));
    }
  } else {
    files = folder_files.empty() ? data_files(path, "--dataset.path") : folder_files;
  }
  auto docs = load_tokens(files, *tokenizer, tokenizer_file, ctx, *log);

  // The validation split is the last fraction of the documents, in file order.
  std::size_t first = 0, last = docs.size();
  if (fraction > 0) {
    const auto n_val = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * static_cast<double>(docs.size())));
    if (n_val >= docs.size())
      throw ConfigError("--dataset.validation_fraction=" + std::to_string(fraction) + " leaves no training document (" +
                        std::to_string(docs.size()) + " documents)");
    if (split == "validation") first = docs.size() - n_val;
    else last = docs.size() - n_val;
  }

  const auto eos = tokenizer->eos_id();
  if (packing_ && !eos)
    throw ConfigError(tokenizer_file + " names no end-of-sequence token (no tokenizer_config.json eos_token, no "
                      "<|end_of_text|>, <|endoftext|> or </s>): packing needs one between documents; add "
                      "tokenizer_config.json or use --dataset.packing=false");
  pad_id_ = static_cast<std::int32_t>(tokenizer->pad_id().value_or(eos.value_or(0)));
  for (std::size_t d = first; d < last; ++d) {
    const auto* begin = docs.tokens.data() + docs.offsets[d];
    const auto* end = docs.tokens.data() + docs.offsets[d + 1];
    if (packing_) {
      stream_.insert(stream_.end(), begin, end);
      stream_.push_back(static_cast<std::int32_t>(*eos));
    } else {
      offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
      tokens_.insert(tokens_.end(), begin, std::min(end, begin + seq_len_));
      if (eos && end - begin < seq_len_) tokens_.push_back(static_cast<std::int32_t>(*eos));
    }
  }
  if (!packing_) offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
  if (size() == 0)
    throw ConfigError("the text dataset's " + split + " split is empty (" + std::to_string(last - first) + " documents)");
  log->info("text dataset: {} split, {} documents, {} samples of {} tokens ({})", split, last - first, size(), seq_len_,
            packing_ ? "packed, documents separated by EOS" : "one document per sample, right-padded");
}

TextDataset::~TextDataset() = default;

std::int64_t TextDataset::size() const {
  if (packing_) return (static_cast<std::int64_t>(stream_.size()) + seq_len_ - 1) / seq_len_;
  return static_cast<std::int64_t>(offsets_.size()) - 1;
}

FeatureShapes TextDataset::features() const {
  return {{"input_ids", {seq_len_}}, {"attention_mask", {seq_len_}}, {"labels", {seq_len_}}};
}

Batch TextDataset::get_batch(const std::vector<std::int64_t>& indices) const {
  const auto b = static_cast<std::int64_t>(indices.size());
  auto ids = at::full({b, seq_len_}, pad_id_, at::kLong);
  auto mask = at::zeros({b, seq_len_}, at::kLong);
  auto labels = at::full({b, seq_len_}, -100, at::kLong);
  auto* pi = ids.data_ptr<std::int64_t>();
  auto* pm = mask.data_ptr<std::int64_t>();
  auto* pl = labels.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < b; ++r) {
    const auto i = indices[r];
    if (i < 0 || i >= size())
      throw RuntimeError("text dataset: index " + std::to_string(i) + " outside [0, " + std::to_string(size()) + ")");
    const std::int32_t* src;
    std::int64_t n;
    if (packing_) {
      src = stream_.data() + i * seq_len_;
      n = std::min<std::int64_t>(seq_len_, static_cast<std::int64_t>(stream_.size()) - i * seq_len_);
    } else {
      src = tokens_.data() + offsets_[i];
      n = offsets_[i + 1] - offsets_[i];
    }
    for (std::int64_t t = 0; t < n; ++t) {
      pi[r * seq_len_ + t] = src[t];
      pm[r * seq_len_ + t] = 1;
      pl[r * seq_len_ + t] = src[t];
    }
  }
  return {{"input_ids", ids}, {"attention_mask", mask}, {"labels", labels}};
}

}  // namespace shardkit::text
