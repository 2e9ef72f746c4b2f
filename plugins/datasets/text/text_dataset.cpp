// Building the text dataset: files -> documents (texts or conversations) -> tokens (cached) -> split -> samples.
#include "text_dataset.hpp"

#include <spdlog/logger.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <thread>

#include <ATen/ATen.h>

#include "chat_format.hpp"
#include "data_splits.hpp"
#include "preview.hpp"
#include "template_tokens.hpp"
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

// Every document of `files`, in order.
Documents read_all(const std::vector<std::string>& files, const PluginContext& ctx) {
  Documents documents;
  for (const auto& f : files)
    read_documents(f, ctx.options.get_string("text_column"), sample_by(ctx.options.get_string("sample_by")), documents);
  if (documents.where.empty())
    throw ConfigError("the text dataset is empty: " + std::to_string(files.size()) + " file(s) under --dataset.path " +
                      "hold no non-empty document" + (files.empty() ? "" : " (first: " + files.front() + ")"));
  return documents;
}

// The chat format of conversations `documents` (ConfigError when --dataset.chat_template=none).
ChatFormat chat_format(const Documents& documents, std::shared_ptr<const Tokenizer> tokenizer,
                       const std::string& tokenizer_file, const PluginContext& ctx) {
  const auto chat_template = ctx.options.get_string("chat_template");
  if (chat_template == "none")
    throw ConfigError("the text dataset holds conversations (a 'messages' list, the first at " + documents.where.front() +
                      ") and --dataset.chat_template=none trains on plain text only: give "
                      "--dataset.chat_template=tokenizer (the tokenizer's own template), chatml, zephyr or a .jinja file");
  return ChatFormat::load(chat_template, tokenizer_file, std::move(tokenizer), ctx.options.get_bool("response_only_loss"));
}

// The tokenized documents of `files`: from the cache when it has them, else tokenized now
// (and cached by the node's first rank).
TokenizedDocs load_tokens(const std::vector<std::string>& files, std::shared_ptr<const Tokenizer> tokenizer,
                          const std::string& tokenizer_file, const PluginContext& ctx, spdlog::logger& log) {
  const auto& o = ctx.options;
  const auto folder = cache_folder(o.get_string("cache_dir"));
  const auto tokenizer_folder = fs::path(tokenizer_file).parent_path();
  const auto chat_template = o.get_string("chat_template");
  // Every file and option that changes the tokens or the labels.
  const std::vector<std::string> inputs = {tokenizer_file, (tokenizer_folder / "tokenizer_config.json").string(),
                                           (tokenizer_folder / "chat_template.jinja").string(), chat_template};
  const auto key = cache_key(files, inputs,
                             "text_column=" + o.get_string("text_column") + "\nsample_by=" + o.get_string("sample_by") +
                                 "\nchat_template=" + chat_template + "\nresponse_only_loss=" +
                                 (o.get_bool("response_only_loss") ? "true" : "false") +
                                 "\non_bad_example=" + o.get_string("on_bad_example"));
  const auto cache_file = folder + "/" + key + ".tokens";
  std::string problem;
  if (auto cached = read_token_cache(cache_file, problem)) {
    log.info("text dataset: {} {} ({} tokens) read from the token cache {}", cached->size(),
             cached->chat ? "conversations" : "documents", cached->tokens.size(), cache_file);
    return std::move(*cached);
  }
  if (!problem.empty()) log.warn("text dataset: ignoring the token cache {}: {}", cache_file, problem);

  const auto documents = read_all(files, ctx);
  const auto local_ranks = ctx.runtime ? std::max(1, ctx.runtime->local_world_size) : 1;
  auto threads = static_cast<int>(o.get_int("num_threads"));
  if (threads == 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks);
  TokenizedDocs docs;
  if (documents.chat()) {
    const auto format = chat_format(documents, tokenizer, tokenizer_file, ctx);
    log.info("text dataset: rendering and tokenizing {} conversations from {} file(s) on {} thread(s) with {}",
             documents.conversations.size(), files.size(), threads, format.description());
    docs = tokenize_conversations(documents, format, o.get_string("on_bad_example") == "skip", threads, log);
    docs.chat = true;
  } else {
    log.info("text dataset: tokenizing {} documents from {} file(s) on {} thread(s){}", documents.texts.size(),
             files.size(), threads,
             documents.empty_skipped ? " (" + std::to_string(documents.empty_skipped) + " empty ones skipped)" : "");
    docs = tokenize_documents(documents, *tokenizer, threads, log);
  }
  if (docs.size() == 0)
    throw ConfigError("the text dataset is empty: every one of its " + std::to_string(documents.where.size()) +
                      " conversations was left out (--dataset.on_bad_example=skip)");
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
  std::shared_ptr<const Tokenizer> tokenizer = Tokenizer::load(tok_path);
  const auto tokenizer_file = fs::is_directory(tok_path) ? (fs::path(tok_path) / "tokenizer.json").string() : tok_path;
  // AITraining's chatml and zephyr give the tokenizer their special tokens and template.
  if (const auto name = o.get_string("chat_template"); name == "chatml" || name == "zephyr") {
    auto with = add_template_tokens(tokenizer_file, name);
    tokenizer = std::move(with.tokenizer);
    tokenizer_files_ = std::move(with.files);
    std::string added;
    for (const auto& t : with.added) added += (added.empty() ? "" : " ") + t;
    tokenizer_change_ = "--dataset.chat_template=" + name + ": " +
                        (added.empty() ? "the tokenizer has all of AITraining's special tokens for it"
                                       : "AITraining's special tokens the tokenizer lacked were added: " + added +
                                             " (ids " + std::to_string(tokenizer->vocab_size() - with.added.size()) +
                                             " to " + std::to_string(tokenizer->vocab_size() - 1) + ")") +
                        "; checkpoints save the tokenizer so, with the " + name + " template";
    if (!ctx.runtime || ctx.runtime->is_main()) log->info("text dataset: {}", tokenizer_change_);
  }
  token_count_ = static_cast<std::int64_t>(tokenizer->vocab_size());
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
  if (const auto count = o.get_int("preview"); count > 0) {
    const auto documents = read_all(files, ctx);
    const auto format =
        documents.chat() ? std::optional(chat_format(documents, tokenizer, tokenizer_file, ctx)) : std::nullopt;
    preview_ = preview_lines(documents, *tokenizer, format ? &*format : nullptr,
                             o.get_string("on_bad_example") == "skip", count, seq_len_);
    previewing_ = true;
    return;
  }
  auto docs = load_tokens(files, tokenizer, tokenizer_file, ctx, *log);
  // Plain text is packed unless told otherwise; conversations are not (AITraining's default).
  packing_ = o.has("packing") ? o.get_bool("packing") : !docs.chat;
  packed_chat_ = docs.chat && packing_;

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
  if (packing_ && !docs.chat && !eos)
    throw ConfigError(tokenizer_file + " names no end-of-sequence token (no tokenizer_config.json eos_token, no "
                      "<|end_of_text|>, <|endoftext|> or </s>): packing needs one between documents; add "
                      "tokenizer_config.json or use --dataset.packing=false");
  pad_id_ = static_cast<std::int32_t>(tokenizer->pad_id().value_or(eos.value_or(0)));
  std::size_t truncated = 0, unlabelled = 0;
  for (std::size_t d = first; d < last; ++d) {
    const auto from = docs.offsets[d], to = docs.offsets[d + 1];
    const auto* begin = docs.tokens.data() + from;
    const auto* end = docs.tokens.data() + to;
    if (docs.chat) {
      // As TRL's SFTTrainer: the conversation cut to max_seq_len (its start kept), no EOS added,
      // and left out when no token of what remains is trained on. Packed: conversations follow
      // each other in a row while they fit, each its own sequence (position_ids restart).
      const auto n = std::min<std::int64_t>(to - from, seq_len_);
      truncated += to - from > seq_len_;
      if (!has_label(docs.trained.empty() ? nullptr : docs.trained.data() + from, static_cast<std::size_t>(n))) {
        ++unlabelled;
        continue;
      }
      const auto row_start = offsets_.empty() ? 0 : offsets_.back();
      if (!packed_chat_ || offsets_.empty() || static_cast<std::int64_t>(tokens_.size()) - row_start + n > seq_len_)
        offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
      starts_.push_back(static_cast<std::int64_t>(tokens_.size()));
      tokens_.insert(tokens_.end(), begin, begin + n);
      if (!docs.trained.empty())
        trained_.insert(trained_.end(), docs.trained.begin() + from, docs.trained.begin() + from + n);
    } else if (packing_) {
      stream_.insert(stream_.end(), begin, end);
      stream_.push_back(static_cast<std::int32_t>(*eos));
    } else {
      offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
      tokens_.insert(tokens_.end(), begin, std::min(end, begin + seq_len_));
      if (eos && end - begin < seq_len_) tokens_.push_back(static_cast<std::int32_t>(*eos));
    }
  }
  if (!packing_ || docs.chat) offsets_.push_back(static_cast<std::int64_t>(tokens_.size()));
  const auto kind = docs.chat ? "conversations" : "documents";
  if (size() == 0)
    throw ConfigError("the text dataset's " + split + " split is empty (" + std::to_string(last - first) + " " + kind +
                      (unlabelled ? ", every one without a token to train on within --dataset.max_seq_len" : "") + ")");
  log->info("text dataset: {} split, {} {}, {} samples of {} tokens ({})", split, last - first, kind, size(), seq_len_,
            packed_chat_ ? "conversations packed in order, each attending only to itself"
            : packing_   ? "packed, documents separated by EOS"
            : docs.chat  ? "one conversation per sample, right-padded"
                         : "one document per sample, right-padded");
  if (truncated)
    log->warn("text dataset: {} of {} conversations were longer than --dataset.max_seq_len={} and were cut to it (their "
              "start kept, as TRL's SFTTrainer)", truncated, last - first, seq_len_);
  if (unlabelled)
    log->warn("text dataset: {} conversations were left out: no token to train on is left within "
              "--dataset.max_seq_len={} (as TRL's SFTTrainer drops them)", unlabelled, seq_len_);
  if (docs.skipped)
    log->info("text dataset: {} conversations that could not be rendered were left out (--dataset.on_bad_example=skip)",
              docs.skipped);
}

TextDataset::~TextDataset() = default;

std::int64_t TextDataset::size() const {
  if (previewing_) return 0;
  if (packing_ && !packed_chat_) return (static_cast<std::int64_t>(stream_.size()) + seq_len_ - 1) / seq_len_;
  return static_cast<std::int64_t>(offsets_.size()) - 1;
}

FeatureShapes TextDataset::features() const {
  FeatureShapes shapes{{"input_ids", {seq_len_}}, {"attention_mask", {seq_len_}}, {"labels", {seq_len_}}};
  if (packed_chat_) shapes["position_ids"] = {seq_len_};
  return shapes;
}

Batch TextDataset::get_batch(const std::vector<std::int64_t>& indices) const {
  const auto b = static_cast<std::int64_t>(indices.size());
  auto ids = at::full({b, seq_len_}, pad_id_, at::kLong);
  auto mask = at::zeros({b, seq_len_}, at::kLong);
  auto labels = at::full({b, seq_len_}, -100, at::kLong);
  auto positions = packed_chat_ ? at::zeros({b, seq_len_}, at::kLong) : at::Tensor();
  auto* pi = ids.data_ptr<std::int64_t>();
  auto* pm = mask.data_ptr<std::int64_t>();
  auto* pl = labels.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < b; ++r) {
    const auto i = indices[r];
    if (i < 0 || i >= size())
      throw RuntimeError("text dataset: index " + std::to_string(i) + " outside [0, " + std::to_string(size()) + ")");
    const std::int32_t* src;
    std::int64_t n;
    if (packing_ && !packed_chat_) {
      src = stream_.data() + i * seq_len_;
      n = std::min<std::int64_t>(seq_len_, static_cast<std::int64_t>(stream_.size()) - i * seq_len_);
    } else {
      src = tokens_.data() + offsets_[i];
      n = offsets_[i + 1] - offsets_[i];
    }
    const std::uint8_t* trained = trained_.empty() ? nullptr : trained_.data() + offsets_[i];
    for (std::int64_t t = 0; t < n; ++t) {
      pi[r * seq_len_ + t] = src[t];
      pm[r * seq_len_ + t] = 1;
      pl[r * seq_len_ + t] = !trained || trained[t] ? src[t] : -100;
    }
    if (packed_chat_) {
      // Each conversation's positions count from 0; its first token is no label (it would be
      // predicted from the conversation before it), as TRL's padding-free batches.
      auto* pp = positions.data_ptr<std::int64_t>() + r * seq_len_;
      auto start = std::lower_bound(starts_.begin(), starts_.end(), offsets_[i]);
      for (std::int64_t t = 0, position = 0; t < n; ++t, ++position) {
        if (start != starts_.end() && *start == offsets_[i] + t) {
          position = 0;
          pl[r * seq_len_ + t] = -100;
          ++start;
        }
        pp[t] = position;
      }
    }
  }
  Batch batch{{"input_ids", ids}, {"attention_mask", mask}, {"labels", labels}};
  if (packed_chat_) batch["position_ids"] = positions;
  return batch;
}

void TextDataset::write_preview(std::ostream& out) const { out << preview_; }

}  // namespace shardkit::text
