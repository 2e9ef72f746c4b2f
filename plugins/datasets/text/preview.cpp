// Preview lines: each example rendered, tokenized, cut and labelled as a training sample is.
#include "preview.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "chat_format.hpp"
#include "shardkit/error.hpp"
#include "tokenizer/tokenizer.hpp"

namespace shardkit::text {
namespace {

std::string line(const std::string& text, const std::vector<std::uint32_t>& ids, const std::vector<std::uint8_t>& trained,
                 std::int64_t seq_len) {
  const auto n = std::min<std::size_t>(ids.size(), static_cast<std::size_t>(seq_len));
  boost::json::array input_ids, labels;
  for (std::size_t i = 0; i < n; ++i) {
    input_ids.push_back(ids[i]);
    labels.push_back(trained.empty() || trained[i] ? std::int64_t{ids[i]} : std::int64_t{-100});
  }
  boost::json::object o;
  o["text"] = text;
  o["input_ids"] = std::move(input_ids);
  o["labels"] = std::move(labels);
  return boost::json::serialize(o) + "\n";
}

}  // namespace

std::string preview_lines(const Documents& docs, const Tokenizer& tokenizer, const ChatFormat* format, bool skip_bad,
                          std::int64_t count, std::int64_t seq_len) {
  std::string out;
  std::int64_t written = 0;
  for (std::size_t i = 0; i < docs.where.size() && written < count; ++i) {
    if (!format) {
      auto ids = tokenizer.encode(docs.texts[i], true);
      if (const auto eos = tokenizer.eos_id()) ids.push_back(*eos);
      out += line(docs.texts[i], ids, {}, seq_len);
      ++written;
      continue;
    }
    try {
      const auto tokens = format->tokenize(docs.conversations[i]);
      // Left out, as training leaves it out: nothing to train on within seq_len.
      const auto kept = std::min<std::size_t>(tokens.ids.size(), static_cast<std::size_t>(seq_len));
      if (!has_label(tokens.trained.empty() ? nullptr : tokens.trained.data(), kept)) continue;
      out += line(tokens.text, tokens.ids, tokens.trained, seq_len);
      ++written;
    } catch (const Error& e) {
      if (!skip_bad)
        throw FormatError(docs.where[i] + ": conversation " + std::to_string(i) + ": " + e.what() +
                          " (--dataset.on_bad_example=skip leaves such conversations out)");
    }
  }
  return out;
}

}  // namespace shardkit::text
